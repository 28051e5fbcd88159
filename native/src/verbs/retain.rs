//! `EMQ.RETAIN 1 <meta> <dead_max> <dead_age_ms>`: the queue's retention of dead jobs in its `meta`
//! (made if missing); the next BURY or CLAIM applies it. Reply 1.

use super::pause::made;
use super::scope::Scope;
use crate::command::{Args, Call, Reply};
use crate::keyspace::Queue;
use crate::wire::{Arg, Gate, Refusal, Verb};

/// RETAIN's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.RETAIN",
    command: "emq.retain",
    args: &[
        Arg {
            name: "dead_max",
            gate: Gate::Number { min: 0, max: None },
        },
        Arg {
            name: "dead_age_ms",
            gate: Gate::Number { min: 0, max: None },
        },
    ],
    group: &[],
    min_groups: 1,
    admits: false,
};

/// Runs RETAIN's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let s = Scope::new(call, q);
    let ctx = s.ctx;
    let meta = s.meta()?;
    made(&meta);
    let (max_f, age_f) = (ctx.string(b"dead_max"), ctx.string(b"dead_age_ms"));
    let (max, age) = (ctx.int(args.number(0)), ctx.int(args.number(1)));
    meta.hset(&[
        (max_f.as_str(), max.as_str()),
        (age_f.as_str(), age.as_str()),
    ]);
    Ok(Reply::Int(1))
}
