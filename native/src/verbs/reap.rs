//! `EMQ.REAP 3 <active> <pending> <base> <limit>`: up to limit ids whose lease expired move active
//! → pending (RPUSH: claimed next), their rows to state `pending`. Reply: ids moved.

use super::move_due::move_due;
use crate::command::{Args, Call, Reply};
use crate::keyspace::Queue;
use crate::wire::{Arg, Gate, Refusal, Role, Verb};

/// REAP's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.REAP",
    command: "emq.reap",
    keys: &[Role::Active, Role::Pending, Role::Base],
    args: &[Arg {
        name: "limit",
        gate: Gate::Number { min: 1 },
    }],
};

/// Runs REAP's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    move_due(call, q, args.number(0), true)
}
