//! `EMQ.SCHEDULE 1 <meta> (<id> <due_ms> <payload>)…`: new rows in state `scheduled`, the ids in
//! schedule at their due_ms; the `due` marker on wake lowered to the earliest, and waiting claims
//! told (they may now wait less). Reply: the count.

use super::admit::{admit, admitted};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{self, Kind, Owned, Str};
use crate::keyspace::{PENDING, SCHEDULE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs SCHEDULE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let a = admit(s, args, SCHEDULE, Kind::Zset)?;
    s.probe()?;

    let (ctx, l) = (s.ctx, lit());
    let now = ctx.int(ffi::now_ms());
    admitted(&a, now.as_str());
    let (ids, schedule) = (&a.ids, &a.structure);
    let dues: Vec<Owned> = (0..ids.len())
        .map(|j| ctx.int(args.job_number(j, 1)))
        .collect();
    let mut zadd: Vec<Str> = Vec::with_capacity(1 + 2 * ids.len());
    zadd.push(schedule.name());
    for (j, name) in a.rows.iter().enumerate() {
        ctx.open(name.as_str()).hset(&[
            (l.row.state, l.state.scheduled),
            (l.row.payload, args.job_bytes(j, 2)),
            (l.row.attempts, l.zero),
            (l.row.created_ms, now.as_str()),
            (l.row.due_ms, dues[j].as_str()),
        ]);
        schedule.zadd(args.job_number(j, 1) as f64, ids[j]);
        zadd.push(dues[j].as_str());
        zadd.push(ids[j]);
    }
    ctx.replicate(c"ZADD", &zadd);
    let earliest = (0..ids.len())
        .map(|j| args.job_number(j, 1))
        .min()
        .unwrap_or_default();
    if a.wake.zadd_lt(earliest as f64, l.wake.due) {
        let at = ctx.int(earliest);
        ctx.replicate(c"ZADD", &[a.wake.name(), l.lt, at.as_str(), l.wake.due]);
    }
    ctx.signal_ready(s.name(PENDING).as_str());
    Ok(Reply::Int(ids.len() as i64))
}
