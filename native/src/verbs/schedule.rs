//! `EMQ.SCHEDULE 2 <row> <schedule> <id> <due_ms> <payload>`: a new row in state `scheduled`, the
//! id in schedule at due_ms. Reply 1.

use super::{expect, fence, gate_id, gate_number, gate_payload, row_queue, same, shape};
use crate::command::{Call, Reply};
use crate::keyspace::SCHEDULE;
use crate::store::{self, lit, Key, Kind, Owned};
use crate::wire::{Refusal, Verb};

/// SCHEDULE's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.SCHEDULE",
    command: "emq.schedule\0",
    numkeys: b"2",
    keys: 2,
    args: 3,
};

/// Runs SCHEDULE.
pub fn run(call: &Call, verb: &Verb) -> Result<Reply, Refusal> {
    shape(call, verb)?;
    let ctx = call.ctx;
    let (row, schedule) = (call.key(0), call.key(1));
    let (id, due, payload) = (call.arg(verb, 0), call.arg(verb, 1), call.arg(verb, 2));
    let q = row_queue(call, verb)?;
    same(call, &q, 1, SCHEDULE)?;
    fence(call)?;
    gate_id(id)?;
    let due = gate_number(due, "due_ms", false)?;
    gate_payload(payload)?;

    let row_k = Key::write(ctx, row);
    let schedule_k = Key::write(ctx, schedule);
    expect(&row_k, Kind::Hash)?;
    expect(&schedule_k, Kind::Zset)?;
    if row_k.kind() != Kind::Empty {
        return Err(Refusal::Duplicate);
    }

    let l = lit();
    let now = Owned::int(ctx, store::now_ms());
    let due_s = Owned::int(ctx, due);
    row_k.hset(&[
        (l.state, l.scheduled),
        (l.payload, payload),
        (l.attempts, l.zero),
        (l.created_ms, now.ptr()),
        (l.due_ms, due_s.ptr()),
    ]);
    schedule_k.zadd(due as f64, id);

    store::replicate(ctx, c"ZADD", &[schedule, due_s.ptr(), id]);
    Ok(Reply::Int(1))
}
