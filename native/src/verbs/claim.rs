//! `EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>`: pops the tail id of pending (dropping ids
//! whose row is missing), puts it in active at now+lease_ms, counts the attempt. Reply
//! `[id, payload, attempts]` or nil.

use super::{expect, fence, first_queue, gate_number, same, shape};
use crate::command::{Call, Reply};
use crate::gates;
use crate::keyspace::{self, ACTIVE, PENDING};
use crate::store::{self, lit, Key, Kind, Owned};
use crate::wire::{Refusal, Verb};

/// CLAIM's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.CLAIM",
    command: "emq.claim\0",
    numkeys: b"3",
    keys: 3,
    args: 1,
};

/// Runs CLAIM.
pub fn run(call: &Call, verb: &Verb) -> Result<Reply, Refusal> {
    shape(call, verb)?;
    let ctx = call.ctx;
    let (pending, active, base) = (call.key(0), call.key(1), call.key(2));
    let lease = call.arg(verb, 0);
    let q = first_queue(call, PENDING)?;
    same(call, &q, 1, ACTIVE)?;
    same(call, &q, 2, b"")?;
    fence(call)?;
    let lease = gate_number(lease, "lease_ms", true)?;

    let pending_k = Key::write(ctx, pending);
    let active_k = Key::write(ctx, active);
    expect(&pending_k, Kind::List)?;
    expect(&active_k, Kind::Zset)?;

    // Walk from the tail, writing nothing, to the first id whose row exists.
    let len = if pending_k.kind() == Kind::List {
        pending_k.value_len()
    } else {
        0
    };
    let base_b = store::bytes(base);
    let mut skipped: i64 = 0;
    let mut found = None;
    for i in 1..=len as i64 {
        let Some(id) = pending_k.index(-i) else { break };
        let name = Owned::new(ctx, &keyspace::row_of(base_b, id.bytes()));
        let row = Key::write(ctx, name.ptr());
        match row.kind() {
            Kind::Empty => skipped += 1,
            Kind::Hash => {
                found = Some((id, name, row));
                break;
            }
            _ => return Err(Refusal::WrongType),
        }
    }

    let l = lit();
    // `_row_name` owns the row key's name, which `row.hset` replicates: it must outlive `row`.
    let Some((id, _row_name, row)) = found else {
        if skipped > 0 {
            for _ in 0..skipped {
                pending_k.pop_tail();
            }
            let count = Owned::int(ctx, skipped);
            store::replicate(ctx, c"RPOP", &[pending, count.ptr()]);
        }
        return Ok(Reply::Nil);
    };
    let attempts = match row.hget(l.attempts) {
        None => 0,
        Some(s) => gates::counter(s.bytes()).ok_or(Refusal::NotInteger)?,
    };
    let attempts = attempts.checked_add(1).ok_or(Refusal::NotInteger)?;

    for _ in 0..=skipped {
        pending_k.pop_tail();
    }
    let deadline = store::now_ms() + lease;
    let deadline_s = Owned::int(ctx, deadline);
    let attempts_s = Owned::int(ctx, attempts);
    active_k.zadd(deadline as f64, id.ptr());
    row.hset(&[
        (l.attempts, attempts_s.ptr()),
        (l.state, l.active),
        (l.deadline_ms, deadline_s.ptr()),
    ]);
    let payload = row.hget(l.payload);

    let popped = Owned::int(ctx, skipped + 1);
    store::replicate(ctx, c"RPOP", &[pending, popped.ptr()]);
    store::replicate(ctx, c"ZADD", &[active, deadline_s.ptr(), id.ptr()]);
    Ok(Reply::Claimed {
        id,
        payload,
        attempts,
    })
}
