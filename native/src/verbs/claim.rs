//! `EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>`: pops the tail id of pending (dropping ids
//! whose row is missing), puts it in active at now+lease_ms, counts the attempt. Reply
//! `[id, payload, attempts]` or nil.

use super::expect;
use crate::command::{Args, Call, Reply};
use crate::ffi::{self, lit, Kind};
use crate::gates;
use crate::keyspace::{self, Queue};
use crate::wire::{Arg, Gate, Refusal, Role, Verb};

/// CLAIM's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.CLAIM",
    command: "emq.claim",
    keys: &[Role::Pending, Role::Active, Role::Base],
    args: &[Arg {
        name: "lease_ms",
        gate: Gate::Number { min: 1 },
    }],
};

/// Runs CLAIM's steps 5–6.
pub fn run<'a>(call: &Call<'a>, _q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let ctx = call.ctx;
    let (pending, active, base) = (call.key(0), call.key(1), call.key(2));
    let lease = args.number(0);
    let pending_k = ctx.open(pending);
    let active_k = ctx.open(active);
    expect(&pending_k, Kind::List)?;
    expect(&active_k, Kind::Zset)?;

    // Walk from the tail, writing nothing, to the first id whose row exists.
    let len = if pending_k.kind() == Kind::List {
        pending_k.value_len()
    } else {
        0
    };
    let mut skipped: i64 = 0;
    let mut found = None;
    for i in 1..=len as i64 {
        let Some(id) = pending_k.index(-i) else { break };
        let name = ctx.string(&keyspace::row_of(base.bytes(), id.bytes()));
        let kind = ctx.open(name.as_str()).kind();
        match kind {
            Kind::Empty => skipped += 1,
            Kind::Hash => {
                found = Some((id, name));
                break;
            }
            _ => return Err(Refusal::WrongType),
        }
    }

    let l = lit();
    let Some((id, row_name)) = found else {
        if skipped > 0 {
            for _ in 0..skipped {
                pending_k.pop_tail();
            }
            let count = ctx.int(skipped);
            ctx.replicate(c"RPOP", &[pending, count.as_str()]);
        }
        return Ok(Reply::Nil);
    };
    // The row key borrows its name: the borrow checker keeps the name alive while it is open.
    let row = ctx.open(row_name.as_str());
    let attempts = match row.hget(l.attempts) {
        None => 0,
        Some(s) => gates::counter(s.bytes()).ok_or(Refusal::NotInteger)?,
    };
    let attempts = attempts.checked_add(1).ok_or(Refusal::NotInteger)?;

    for _ in 0..=skipped {
        pending_k.pop_tail();
    }
    let deadline = ffi::now_ms() + lease;
    let deadline_s = ctx.int(deadline);
    let attempts_s = ctx.int(attempts);
    active_k.zadd(deadline as f64, id.as_str());
    row.hset(&[
        (l.attempts, attempts_s.as_str()),
        (l.state, l.active),
        (l.deadline_ms, deadline_s.as_str()),
    ]);
    let payload = row.hget(l.payload);

    let popped = ctx.int(skipped + 1);
    ctx.replicate(c"RPOP", &[pending, popped.as_str()]);
    ctx.replicate(c"ZADD", &[active, deadline_s.as_str(), id.as_str()]);
    Ok(Reply::Claimed {
        id,
        payload,
        attempts,
    })
}
