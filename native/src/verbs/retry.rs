//! `EMQ.RETRY 1 <meta> (<id> <token> <delay_ms> <reason>)…`: each job goes active → schedule at
//! now + its delay_ms with its reason kept; the `due` marker on wake lowered to the earliest, and
//! waiting claims told. Reply: the count.

use super::add;
use super::leases::{held, ids};
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
    let ids = ids(args)?;
    let meta = s.meta()?;
    let (active_name, schedule_name, wake_name) = (s.name(ACTIVE), s.name(SCHEDULE), s.name(WAKE));
    let active = s.expect(active_name.as_str(), Kind::Zset)?;
    let schedule = s.expect(schedule_name.as_str(), Kind::Zset)?;
    let wake = s.expect(wake_name.as_str(), Kind::Zset)?;
    let (rows, retried) = held(&mut s, args, &meta, &active, Some(l.retried))?;

    let now = ffi::now_ms();
    let dues: Vec<i64> = (0..ids.len())
        .map(|j| now + args.job_number(j, 2))
        .collect();
    let due_strs: Vec<Owned> = dues.iter().map(|&d| ctx.int(d)).collect();
    let mut zadd: Vec<Str> = vec![schedule_name.as_str()];
    for (j, &id) in ids.iter().enumerate() {
        active.zrem(id);
        schedule.zadd(dues[j] as f64, id);
        ctx.open(rows[j].as_str()).hset(&[
            (l.state, l.scheduled),
            (l.due_ms, due_strs[j].as_str()),
            (l.reason, args.job_bytes(j, 3)),
        ]);
        zadd.push(due_strs[j].as_str());
        zadd.push(id);
    }
    let mut zrem: Vec<Str> = vec![active_name.as_str()];
    zrem.extend(&ids);
    ctx.replicate(c"ZREM", &zrem);
    ctx.replicate(c"ZADD", &zadd);
    add(&meta, l.retried, retried, ids.len() as i64);
    let earliest = dues.iter().copied().min().unwrap_or(now);
    if wake.zadd_lt(earliest as f64, l.due) {
        let at = ctx.int(earliest);
        ctx.replicate(c"ZADD", &[wake_name.as_str(), l.lt, at.as_str(), l.due]);
    }
    ctx.signal_ready(s.name(PENDING).as_str());
    Ok(Reply::Int(ids.len() as i64))
}
