//! `EMQ.BURY 3 <row> <active> <dead> <id> <reason>`: active → dead at now, the row to state
//! `dead` with the reason kept. Reply 1.

use super::{expect, expect_active};
use crate::command::{Args, Call, Reply};
use crate::ffi::{self, lit, Kind};
use crate::keyspace::Queue;
use crate::wire::{Arg, Gate, Refusal, Role, Verb};

/// BURY's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.BURY",
    command: "emq.bury",
    keys: &[Role::Row, Role::Active, Role::Dead],
    args: &[
        Arg {
            name: "id",
            gate: Gate::JobId,
        },
        Arg {
            name: "reason",
            gate: Gate::Reason,
        },
    ],
};

/// Runs BURY's steps 5–6.
pub fn run<'a>(call: &Call<'a>, _q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let ctx = call.ctx;
    let (row, active, dead) = (call.key(0), call.key(1), call.key(2));
    let (id, reason) = (args.bytes(0), args.bytes(1));
    let row_k = ctx.open(row);
    let active_k = ctx.open(active);
    let dead_k = ctx.open(dead);
    expect(&row_k, Kind::Hash)?;
    expect(&active_k, Kind::Zset)?;
    expect(&dead_k, Kind::Zset)?;
    expect_active(&row_k, &active_k, id)?;

    let l = lit();
    let now = ffi::now_ms();
    let now_s = ctx.int(now);
    active_k.zrem(id);
    dead_k.zadd(now as f64, id);
    row_k.hset(&[
        (l.state, l.dead),
        (l.reason, reason),
        (l.buried_ms, now_s.as_str()),
    ]);

    ctx.replicate(c"ZREM", &[active, id]);
    ctx.replicate(c"ZADD", &[dead, now_s.as_str(), id]);
    Ok(Reply::Int(1))
}
