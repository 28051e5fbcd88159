//! `EMQ.TICK 1 <meta> <name> <expected_ms> <next_ms> (<id> <tick_ms>)…`: fires a scheduler,
//! compare-and-set on its next run. Only when the scheduler exists, its `next_ms` is expected_ms,
//! the new next_ms is later and the queue is not paused: one job per id is admitted as ENQUEUE
//! admits a job carrying the scheduler's stored `opts` (ENQUEUE's own checks and writes, with the
//! scheduler's payload; the row also names the scheduler and its run; options that fail the gate,
//! a hand-edited hash, are ignored), and the next run becomes next_ms (the last run: the latest
//! tick_ms admitted). Reply: the jobs admitted (a run whose `dedup` key is held admits none), or -1
//! when it did not fire (another firer took the tick, the spec changed, the queue is paused, the
//! scheduler is gone), having written nothing. Events: `scheduler` (its name and the jobs admitted,
//! when any), then `deduplicated`.

use super::admit::{admitted, plan, start};
use super::enqueue::pushed;
use super::scope::Scope;
use super::{add, counter, paused};
use crate::command::{Args, Reply};
use crate::ffi::{Kind, Owned};
use crate::keyspace::{PENDING, SCHEDULERS};
use crate::literals::lit;
use crate::options::{self, Options};
use crate::wire::Refusal;

/// Runs TICK's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (name, expected, next) = (args.bytes(0), args.number(1), args.number(2));
    let a = start(s, args, PENDING, Kind::List)?;
    let key = s.scheduler(name.bytes());
    let sched = s.expect(key.as_str(), Kind::Hash)?;
    let index = s.structure(SCHEDULERS, Kind::Zset)?;
    let (ctx, l) = (s.ctx, lit());
    let runs = counter(&sched, l.sched.runs)?;
    // the scheduler's options, as its jobs' own; ones that fail the gate (a hand-edited hash) are ignored
    let stored = sched
        .hget(l.sched.opts)
        .filter(|o| options::parse(o.bytes()).is_ok());
    let options: Vec<Options> = match &stored {
        Some(o) => (0..a.ids.len())
            .map(|_| options::parse(o.bytes()).unwrap_or_default())
            .collect(),
        None => Vec::new(),
    };
    let a = plan(s, a, Kind::List, &options)?;
    s.probe()?;
    let expected_text = ctx.int(expected);
    let held = sched.hget(l.sched.next_ms);
    let fires = held.is_some_and(|h| h.bytes() == expected_text.as_str().bytes())
        && next > expected
        && !paused(&a.meta);
    if !fires {
        return Ok(Reply::Int(-1));
    }

    let now = ctx.int(a.now);
    let payload: Owned = sched
        .hget(l.sched.payload)
        .unwrap_or_else(|| ctx.string(b""));
    admitted(s, &a, args, now.as_str(), |_| payload.as_str(), None);
    let ticks: Vec<Owned> = (0..a.ids.len())
        .map(|j| ctx.int(args.job_number(j, 1)))
        .collect();
    pushed(s, &a, now.as_str(), |j| {
        let mut f = vec![(l.row.payload, payload.as_str())];
        if let Some(o) = stored.as_ref().filter(|o| !o.bytes().is_empty()) {
            f.push((l.row.opts, o.as_str()));
        }
        f.extend([(l.row.scheduler, name), (l.row.tick_ms, ticks[j].as_str())]);
        f
    });
    let next_text = ctx.int(next);
    sched.hset(&[(l.sched.next_ms, next_text.as_str())]);
    if let Some(last) = a.admitted.iter().map(|&j| args.job_number(j, 1)).max() {
        sched.hset(&[(l.sched.last_ms, ctx.int(last).as_str())]);
    }
    add(&sched, l.sched.runs, runs, a.admitted.len() as i64);
    index.zadd(next as f64, name);
    ctx.replicate(c"ZADD", &[index.name(), next_text.as_str(), name]);
    a.announce(l.event.scheduler, Some(name));
    Ok(Reply::Int(a.admitted.len() as i64))
}
