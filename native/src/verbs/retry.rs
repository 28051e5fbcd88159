//! `EMQ.RETRY 1 <meta> (<id> <token> <delay_ms> <reason>)…`: each job goes active → schedule at
//! now + its delay_ms with its reason kept; the `due` marker on wake lowered to the earliest, and
//! waiting claims told. Reply: the count.

use super::leases::{held, leave_active};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{self, Kind, Owned, Str};
use crate::keyspace::{ACTIVE, PENDING, SCHEDULE, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs RETRY's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let structures = [
        (ACTIVE, Kind::Zset),
        (SCHEDULE, Kind::Zset),
        (WAKE, Kind::Zset),
    ];
    let (settle, [active, schedule, wake]) = held(s, args, structures, Some(l.meta.retried))?;

    let ids = &settle.ids;
    leave_active(&active, ids);
    let now = ffi::now_ms();
    let dues: Vec<i64> = (0..ids.len())
        .map(|j| now + args.job_number(j, 2))
        .collect();
    let due_strs: Vec<Owned> = dues.iter().map(|&d| ctx.int(d)).collect();
    let mut zadd: Vec<Str> = vec![schedule.name()];
    for (j, &id) in ids.iter().enumerate() {
        schedule.zadd(dues[j] as f64, id);
        ctx.open(settle.rows[j].as_str()).hset(&[
            (l.row.state, l.state.scheduled),
            (l.row.due_ms, due_strs[j].as_str()),
            (l.row.reason, args.job_bytes(j, 3)),
        ]);
        zadd.push(due_strs[j].as_str());
        zadd.push(id);
    }
    ctx.replicate(c"ZADD", &zadd);
    let reply = settle.done();
    let earliest = dues.iter().copied().min().unwrap_or(now);
    if wake.zadd_lt(earliest as f64, l.wake.due) {
        let at = ctx.int(earliest);
        ctx.replicate(c"ZADD", &[wake.name(), l.lt, at.as_str(), l.wake.due]);
    }
    ctx.signal_ready(s.name(PENDING).as_str());
    Ok(reply)
}
