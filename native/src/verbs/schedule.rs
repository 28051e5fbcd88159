//! `EMQ.SCHEDULE 2 <row> <schedule> <id> <due_ms> <payload>`: a new row in state `scheduled`, the
//! id in schedule at due_ms. Reply 1.

use super::expect;
use crate::command::{Args, Call, Reply};
use crate::ffi::{self, lit, Kind};
use crate::keyspace::Queue;
use crate::wire::{Arg, Gate, Refusal, Role, Verb};

/// SCHEDULE's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.SCHEDULE",
    command: "emq.schedule",
    keys: &[Role::Row, Role::Schedule],
    args: &[
        Arg {
            name: "id",
            gate: Gate::JobId,
        },
        Arg {
            name: "due_ms",
            gate: Gate::Number { min: 0 },
        },
        Arg {
            name: "payload",
            gate: Gate::Payload,
        },
    ],
};

/// Runs SCHEDULE's steps 5–6.
pub fn run<'a>(call: &Call<'a>, _q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let ctx = call.ctx;
    let (row, schedule) = (call.key(0), call.key(1));
    let (id, due, payload) = (args.bytes(0), args.number(1), args.bytes(2));
    let row_k = ctx.open(row);
    let schedule_k = ctx.open(schedule);
    expect(&row_k, Kind::Hash)?;
    expect(&schedule_k, Kind::Zset)?;
    if row_k.kind() != Kind::Empty {
        return Err(Refusal::Duplicate);
    }

    let l = lit();
    let now = ctx.int(ffi::now_ms());
    let due_s = ctx.int(due);
    row_k.hset(&[
        (l.state, l.scheduled),
        (l.payload, payload),
        (l.attempts, l.zero),
        (l.created_ms, now.as_str()),
        (l.due_ms, due_s.as_str()),
    ]);
    schedule_k.zadd(due as f64, id);

    ctx.replicate(c"ZADD", &[schedule, due_s.as_str(), id]);
    Ok(Reply::Int(1))
}
