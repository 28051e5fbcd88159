//! `EMQ.RETRY 1 <meta> (<id> <token> <delay_ms> <reason>)…`: each job goes active → schedule at
//! now + its delay_ms with its reason kept; the `due` marker on wake lowered to the earliest, and
//! waiting claims told. Reply: the count.

use super::add;
use super::leases::{held, leave_active, Settle};
use super::scope::Scope;
use crate::command::{Args, Call, Reply};
use crate::ffi::{self, lit, Kind, Owned, Str};
use crate::keyspace::{Queue, ACTIVE, PENDING, SCHEDULE, WAKE};
use crate::wire::{positive, Arg, Gate, Refusal, Verb, ID, TOKEN};

/// RETRY's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.RETRY",
    command: "emq.retry",
    args: &[],
    group: &[
        ID,
        TOKEN,
        positive("delay_ms"),
        Arg {
            name: "reason",
            gate: Gate::Reason,
        },
    ],
    min_groups: 1,
    admits: false,
};

/// Runs RETRY's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let mut s = Scope::new(call, q);
    let ctx = s.ctx;
    let l = lit();
    let Settle {
        ids,
        rows,
        meta,
        keys: [active, schedule, wake],
        total,
    } = held(
        &mut s,
        args,
        [
            (ACTIVE, Kind::Zset),
            (SCHEDULE, Kind::Zset),
            (WAKE, Kind::Zset),
        ],
        Some(l.retried),
    )?;

    leave_active(&active, &ids);
    let now = ffi::now_ms();
    let dues: Vec<i64> = (0..ids.len())
        .map(|j| now + args.job_number(j, 2))
        .collect();
    let due_strs: Vec<Owned> = dues.iter().map(|&d| ctx.int(d)).collect();
    let mut zadd: Vec<Str> = vec![schedule.name()];
    for (j, &id) in ids.iter().enumerate() {
        schedule.zadd(dues[j] as f64, id);
        ctx.open(rows[j].as_str()).hset(&[
            (l.state, l.scheduled),
            (l.due_ms, due_strs[j].as_str()),
            (l.reason, args.job_bytes(j, 3)),
        ]);
        zadd.push(due_strs[j].as_str());
        zadd.push(id);
    }
    ctx.replicate(c"ZADD", &zadd);
    add(&meta, l.retried, total, ids.len() as i64);
    let earliest = dues.iter().copied().min().unwrap_or(now);
    if wake.zadd_lt(earliest as f64, l.due) {
        let at = ctx.int(earliest);
        ctx.replicate(c"ZADD", &[wake.name(), l.lt, at.as_str(), l.due]);
    }
    ctx.signal_ready(s.name(PENDING).as_str());
    Ok(Reply::Int(ids.len() as i64))
}
