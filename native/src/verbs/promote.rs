//! `EMQ.PROMOTE 3 <schedule> <pending> <base> <limit>`: up to limit due ids move schedule →
//! pending (LPUSH), their rows to state `pending`. Reply: ids moved.

use super::move_due;
use crate::command::{Call, Reply};
use crate::keyspace::SCHEDULE;
use crate::wire::{Refusal, Verb};

/// PROMOTE's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.PROMOTE",
    command: "emq.promote\0",
    numkeys: b"3",
    keys: 3,
    args: 1,
};

/// Runs PROMOTE.
pub fn run(call: &Call, verb: &Verb) -> Result<Reply, Refusal> {
    move_due(call, verb, SCHEDULE, false)
}
