//! `EMQ.REAP 1 <meta> <limit>`: up to limit ids whose lease expired move active → pending (RPUSH:
//! claimed next), their rows to state `pending`; a `ready` marker on wake when any moved. Reply:
//! ids moved.

use super::move_due::moved;
use crate::command::{Args, Call, Reply};
use crate::keyspace::{Queue, ACTIVE};
use crate::wire::{positive, Refusal, Verb};

/// REAP's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.REAP",
    command: "emq.reap",
    args: &[positive("limit")],
    group: &[],
    min_groups: 1,
    admits: false,
};

/// Runs REAP's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    moved(call, q, args.number(0), ACTIVE, true)
}
