//! `EMQ.RETRY 3 <row> <active> <schedule> <id> <delay_ms> <reason>`: active → schedule at
//! now+delay_ms, the row to state `scheduled` with the reason kept. Reply 1.

use super::{
    expect, expect_active, fence, gate_id, gate_number, gate_reason, row_queue, same, shape,
};
use crate::command::{Call, Reply};
use crate::keyspace::{ACTIVE, SCHEDULE};
use crate::store::{self, lit, Key, Kind, Owned};
use crate::wire::{Refusal, Verb};

/// RETRY's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.RETRY",
    command: "emq.retry\0",
    numkeys: b"3",
    keys: 3,
    args: 3,
};

/// Runs RETRY.
pub fn run(call: &Call, verb: &Verb) -> Result<Reply, Refusal> {
    shape(call, verb)?;
    let ctx = call.ctx;
    let (row, active, schedule) = (call.key(0), call.key(1), call.key(2));
    let (id, delay, reason) = (call.arg(verb, 0), call.arg(verb, 1), call.arg(verb, 2));
    let q = row_queue(call, verb)?;
    same(call, &q, 1, ACTIVE)?;
    same(call, &q, 2, SCHEDULE)?;
    fence(call)?;
    gate_id(id)?;
    let delay = gate_number(delay, "delay_ms", true)?;
    gate_reason(reason)?;

    let row_k = Key::write(ctx, row);
    let active_k = Key::write(ctx, active);
    let schedule_k = Key::write(ctx, schedule);
    expect(&row_k, Kind::Hash)?;
    expect(&active_k, Kind::Zset)?;
    expect(&schedule_k, Kind::Zset)?;
    expect_active(&row_k, &active_k, id)?;

    let l = lit();
    let due = store::now_ms() + delay;
    let due_s = Owned::int(ctx, due);
    active_k.zrem(id);
    schedule_k.zadd(due as f64, id);
    row_k.hset(&[
        (l.state, l.scheduled),
        (l.due_ms, due_s.ptr()),
        (l.reason, reason),
    ]);

    store::replicate(ctx, c"ZREM", &[active, id]);
    store::replicate(ctx, c"ZADD", &[schedule, due_s.ptr(), id]);
    Ok(Reply::Int(1))
}
