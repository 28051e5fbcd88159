//! `EMQ.SCHEDULE 1 <meta> (<id> <due_ms> <opts> <payload>)…`: new rows in state `scheduled`, the
//! ids in schedule at their due_ms; the `due` marker on wake lowered to the earliest, and waiting
//! claims told (they may now wait less). A job whose `dedup` key is held is not admitted; a
//! debounced one moves its scheduled holder to its own due time (`admit`). Events: `scheduled`,
//! then `deduplicated`. Reply: the count, or
//! `[admitted, (place, holder, outcome)…]` when a job carried a key.

use super::admit::{admit, admitted, fields};
use super::enqueue::placed;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{Kind, Owned, Str};
use crate::keyspace::{PENDING, SCHEDULE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs SCHEDULE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let a = admit(s, args, SCHEDULE, Kind::Zset, 2)?;
    s.probe()?;

    let (ctx, l) = (s.ctx, lit());
    let now = ctx.int(a.now);
    let moved = admitted(s, &a, args, now.as_str(), |j| args.job_bytes(j, 3), Some(1));
    let schedule = &a.structure;
    // an admitted job's due time is its source's: its own, or the last job debounced into it
    let due = |j: usize| args.job_number(a.source[j], 1);
    let dues: Vec<Owned> = a.admitted.iter().map(|&j| ctx.int(due(j))).collect();
    let mut zadd: Vec<Str> = Vec::with_capacity(1 + 2 * a.admitted.len());
    zadd.push(schedule.name());
    for (k, &j) in a.admitted.iter().enumerate() {
        let mut row = vec![(l.row.state, l.state.scheduled)];
        row.extend(fields(&a, args, j, 3, 2));
        row.extend([
            (l.row.attempts, l.zero),
            (l.row.created_ms, now.as_str()),
            (l.row.due_ms, dues[k].as_str()),
        ]);
        let key = ctx.open(a.rows[j].as_str());
        key.hset(&row);
        placed(ctx, &key, &a.places[j]);
        schedule.zadd(due(j) as f64, a.ids[j]);
        zadd.push(dues[k].as_str());
        zadd.push(a.ids[j]);
    }
    if zadd.len() > 1 {
        ctx.replicate(c"ZADD", &zadd);
    }
    let earliest = a
        .admitted
        .iter()
        .map(|&j| due(j))
        .chain((moved > 0).then_some(moved))
        .min();
    if let Some(earliest) = earliest {
        if a.wake.zadd_lt(earliest as f64, l.wake.due) {
            let at = ctx.int(earliest);
            ctx.replicate(c"ZADD", &[a.wake.name(), l.lt, at.as_str(), l.wake.due]);
        }
        ctx.signal_ready(s.name(PENDING).as_str());
    }
    a.announce(l.event.scheduled, None);
    Ok(a.reply())
}
