//! `EMQ.ENQUEUE 1 <meta> (<id> <payload>)…`: new rows in state `pending`, the ids pushed on the
//! head of pending in argument order; a `ready` marker on wake when pending was empty. Reply: the
//! count.

use super::admit::{admitted, new_rows};
use super::counter;
use super::scope::Scope;
use crate::command::{Args, Call, Reply};
use crate::ffi::{self, lit, Kind, Str};
use crate::keyspace::{Queue, PENDING, WAKE};
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
    let ids = args.ids();
    let rows = new_rows(&mut s, &ids)?;
    let meta = s.meta()?;
    let (pending_name, wake_name) = (s.name(PENDING), s.name(WAKE));
    let pending = s.expect(pending_name.as_str(), Kind::List)?;
    let wake = s.expect(wake_name.as_str(), Kind::Zset)?;
    let enqueued = counter(&meta, l.enqueued)?;
    s.probe()?;

    let now = ctx.int(ffi::now_ms());
    admitted(&meta, now.as_str(), enqueued, ids.len());
    for (j, name) in rows.iter().enumerate() {
        ctx.open(name.as_str()).hset(&[
            (l.state, l.pending),
            (l.payload, args.job_bytes(j, 1)),
            (l.attempts, l.zero),
            (l.created_ms, now.as_str()),
        ]);
    }
    let was_empty = pending.kind() == Kind::Empty;
    for &id in &ids {
        pending.push(false, id);
    }
    let mut push: Vec<Str> = Vec::with_capacity(1 + ids.len());
    push.push(pending_name.as_str());
    push.extend(&ids);
    ctx.replicate(c"LPUSH", &push);
    if was_empty {
        wake.zadd(0.0, l.ready);
        ctx.replicate(c"ZADD", &[wake_name.as_str(), l.zero, l.ready]);
    }
    Ok(Reply::Int(ids.len() as i64))
}
