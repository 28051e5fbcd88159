//! `EMQ.RETRY 3 <row> <active> <schedule> <id> <delay_ms> <reason>`: active → schedule at
//! now+delay_ms, the row to state `scheduled` with the reason kept. Reply 1.

use super::{expect, expect_active};
use crate::command::{Args, Call, Reply};
use crate::ffi::{self, lit, Kind};
use crate::keyspace::Queue;
use crate::wire::{Arg, Gate, Refusal, Role, Verb};

/// RETRY's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.RETRY",
    command: "emq.retry",
    keys: &[Role::Row, Role::Active, Role::Schedule],
    args: &[
        Arg {
            name: "id",
            gate: Gate::JobId,
        },
        Arg {
            name: "delay_ms",
            gate: Gate::Number { min: 1 },
        },
        Arg {
            name: "reason",
            gate: Gate::Reason,
        },
    ],
};

/// Runs RETRY's steps 5–6.
pub fn run<'a>(call: &Call<'a>, _q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let ctx = call.ctx;
    let (row, active, schedule) = (call.key(0), call.key(1), call.key(2));
    let (id, delay, reason) = (args.bytes(0), args.number(1), args.bytes(2));
    let row_k = ctx.open(row);
    let active_k = ctx.open(active);
    let schedule_k = ctx.open(schedule);
    expect(&row_k, Kind::Hash)?;
    expect(&active_k, Kind::Zset)?;
    expect(&schedule_k, Kind::Zset)?;
    expect_active(&row_k, &active_k, id)?;

    let l = lit();
    let due = ffi::now_ms() + delay;
    let due_s = ctx.int(due);
    active_k.zrem(id);
    schedule_k.zadd(due as f64, id);
    row_k.hset(&[
        (l.state, l.scheduled),
        (l.due_ms, due_s.as_str()),
        (l.reason, reason),
    ]);

    ctx.replicate(c"ZREM", &[active, id]);
    ctx.replicate(c"ZADD", &[schedule, due_s.as_str(), id]);
    Ok(Reply::Int(1))
}
