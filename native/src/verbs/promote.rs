//! `EMQ.PROMOTE 1 <meta> <limit>`: up to limit due ids move schedule → pending (LPUSH), their rows
//! to state `pending`; a `ready` marker on wake when any moved. Reply: ids moved.

use super::move_due::moved;
use crate::command::{Args, Call, Reply};
use crate::keyspace::{Queue, SCHEDULE};
use crate::wire::{positive, Refusal, Verb};

/// PROMOTE's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.PROMOTE",
    command: "emq.promote",
    args: &[positive("limit")],
    group: &[],
    min_groups: 1,
    admits: false,
};

/// Runs PROMOTE's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    moved(call, q, args.number(0), SCHEDULE, false)
}
