//! `EMQ.ENQUEUE 1 <meta> (<id> <payload>)…`: new rows in state `pending`, the ids pushed on the
//! head of pending in argument order; a `ready` marker on wake when pending was empty. Reply: the
//! count.

use super::admit::{admit, admitted};
use super::scope::Scope;
use crate::command::{Args, Call, Reply};
use crate::ffi::{self, lit, Kind, Str};
use crate::keyspace::{Queue, PENDING};
use crate::wire::{Arg, Gate, Refusal, Verb, ID};

/// ENQUEUE's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.ENQUEUE",
    command: "emq.enqueue",
    args: &[],
    group: &[
        ID,
        Arg {
            name: "payload",
            gate: Gate::Payload,
        },
    ],
    min_groups: 1,
    admits: true,
};

/// Runs ENQUEUE's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let mut s = Scope::new(call, q);
    let ctx = s.ctx;
    let l = lit();
    let a = admit(&mut s, args, PENDING, Kind::List)?;
    s.probe()?;

    let now = ctx.int(ffi::now_ms());
    admitted(&a, now.as_str());
    for (j, name) in a.rows.iter().enumerate() {
        ctx.open(name.as_str()).hset(&[
            (l.state, l.pending),
            (l.payload, args.job_bytes(j, 1)),
            (l.attempts, l.zero),
            (l.created_ms, now.as_str()),
        ]);
    }
    let pending = &a.structure;
    let was_empty = pending.kind() == Kind::Empty;
    for &id in &a.ids {
        pending.push(false, id);
    }
    let mut push: Vec<Str> = Vec::with_capacity(1 + a.ids.len());
    push.push(pending.name());
    push.extend(&a.ids);
    ctx.replicate(c"LPUSH", &push);
    if was_empty {
        a.wake.zadd(0.0, l.ready);
        ctx.replicate(c"ZADD", &[a.wake.name(), l.zero, l.ready]);
    }
    Ok(Reply::Int(a.ids.len() as i64))
}
