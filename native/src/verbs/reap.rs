//! `EMQ.REAP 3 <active> <pending> <base> <limit>`: up to limit ids whose lease expired move
//! active → the tail of pending (RPUSH: claimed next), their rows to state `pending`. Reply: ids
//! moved.

use super::move_due;
use crate::command::{Call, Reply};
use crate::keyspace::ACTIVE;
use crate::wire::{Refusal, Verb};

/// REAP's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.REAP",
    command: "emq.reap\0",
    numkeys: b"3",
    keys: 3,
    args: 1,
};

/// Runs REAP.
pub fn run(call: &Call, verb: &Verb) -> Result<Reply, Refusal> {
    move_due(call, verb, ACTIVE, true)
}
