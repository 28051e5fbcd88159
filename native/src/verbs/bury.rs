//! `EMQ.BURY 3 <row> <active> <dead> <id> <reason>`: active → dead at now, the row to state
//! `dead` with the reason and the time buried. Reply 1.

use super::{expect, expect_active, fence, gate_id, gate_reason, row_queue, same, shape};
use crate::command::{Call, Reply};
use crate::keyspace::{ACTIVE, DEAD};
use crate::store::{self, lit, Key, Kind, Owned};
use crate::wire::{Refusal, Verb};

/// BURY's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.BURY",
    command: "emq.bury\0",
    numkeys: b"3",
    keys: 3,
    args: 2,
};

/// Runs BURY.
pub fn run(call: &Call, verb: &Verb) -> Result<Reply, Refusal> {
    shape(call, verb)?;
    let ctx = call.ctx;
    let (row, active, dead) = (call.key(0), call.key(1), call.key(2));
    let (id, reason) = (call.arg(verb, 0), call.arg(verb, 1));
    let q = row_queue(call, verb)?;
    same(call, &q, 1, ACTIVE)?;
    same(call, &q, 2, DEAD)?;
    fence(call)?;
    gate_id(id)?;
    gate_reason(reason)?;

    let row_k = Key::write(ctx, row);
    let active_k = Key::write(ctx, active);
    let dead_k = Key::write(ctx, dead);
    expect(&row_k, Kind::Hash)?;
    expect(&active_k, Kind::Zset)?;
    expect(&dead_k, Kind::Zset)?;
    expect_active(&row_k, &active_k, id)?;

    let l = lit();
    let now = store::now_ms();
    let now_s = Owned::int(ctx, now);
    active_k.zrem(id);
    dead_k.zadd(now as f64, id);
    row_k.hset(&[
        (l.state, l.dead),
        (l.reason, reason),
        (l.buried_ms, now_s.ptr()),
    ]);

    store::replicate(ctx, c"ZREM", &[active, id]);
    store::replicate(ctx, c"ZADD", &[dead, now_s.ptr(), id]);
    Ok(Reply::Int(1))
}
