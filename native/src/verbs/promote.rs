//! `EMQ.PROMOTE 3 <schedule> <pending> <base> <limit>`: up to limit due ids move schedule →
//! pending (LPUSH), their rows to state `pending`. Reply: ids moved.

use super::move_due::move_due;
use crate::command::{Args, Call, Reply};
use crate::keyspace::Queue;
use crate::wire::{Arg, Gate, Refusal, Role, Verb};

/// PROMOTE's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.PROMOTE",
    command: "emq.promote",
    keys: &[Role::Schedule, Role::Pending, Role::Base],
    args: &[Arg {
        name: "limit",
        gate: Gate::Number { min: 1 },
    }],
};

/// Runs PROMOTE's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    move_due(call, q, args.number(0), false)
}
