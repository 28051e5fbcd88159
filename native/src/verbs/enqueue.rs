//! `EMQ.ENQUEUE 2 <row> <pending> <id> <payload>`: a new row in state `pending`, the id pushed on
//! the head of pending. Reply 1.

use super::{expect, fence, gate_id, gate_payload, row_queue, same, shape};
use crate::command::{Call, Reply};
use crate::keyspace::PENDING;
use crate::store::{self, lit, Key, Kind, Owned};
use crate::wire::{Refusal, Verb};

/// ENQUEUE's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.ENQUEUE",
    command: "emq.enqueue\0",
    numkeys: b"2",
    keys: 2,
    args: 2,
};

/// Runs ENQUEUE.
pub fn run(call: &Call, verb: &Verb) -> Result<Reply, Refusal> {
    shape(call, verb)?;
    let ctx = call.ctx;
    let (row, pending) = (call.key(0), call.key(1));
    let (id, payload) = (call.arg(verb, 0), call.arg(verb, 1));
    let q = row_queue(call, verb)?;
    same(call, &q, 1, PENDING)?;
    fence(call)?;
    gate_id(id)?;
    gate_payload(payload)?;

    let row_k = Key::write(ctx, row);
    let pending_k = Key::write(ctx, pending);
    expect(&row_k, Kind::Hash)?;
    expect(&pending_k, Kind::List)?;
    if row_k.kind() != Kind::Empty {
        return Err(Refusal::Duplicate);
    }

    let l = lit();
    let now = Owned::int(ctx, store::now_ms());
    row_k.hset(&[
        (l.state, l.pending),
        (l.payload, payload),
        (l.attempts, l.zero),
        (l.created_ms, now.ptr()),
    ]);
    pending_k.push(false, id);

    store::replicate(ctx, c"LPUSH", &[pending, id]);
    Ok(Reply::Int(1))
}
