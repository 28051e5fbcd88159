//! `EMQ.RETRY 1 <meta> (<id> <token> <delay_ms> <reason> <failure>)…`: each job goes active →
//! schedule at now + its delay_ms, or with delay_ms 0 straight to the head of pending (ready now),
//! its reason kept and its failure (the error) among the row's failures; the `due` marker on wake lowered to the earliest scheduled, `ready` written when pending
//! was empty, and waiting claims told. One `retried` event per job (its reason, and when it is due
//! again). Reply: the count.

use super::events::{blank, Fields};
use super::ring;
use super::leases::{self, held, leave_active, Leaves};
use super::mark_ready;
use super::ready;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{Kind, Owned, Str};
use crate::keyspace::{ACTIVE, PENDING, SCHEDULE, WAKE};
use crate::literals::lit;
use crate::spec::FAILURES_KEPT;
use crate::wire::Refusal;

/// Runs RETRY's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let checked = check(s, args)?;
    Ok(write(s, args, checked))
}

/// RETRY's step 5 done: the jobs held, its structures, and what else its writes need.
pub type Checked<'a> = leases::Checked<'a, 4, (Vec<usize>, ready::Plan<'a>)>;

/// RETRY's step 5: every check, nothing written.
pub fn check<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Checked<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let structures = [
        (ACTIVE, Kind::Zset),
        (SCHEDULE, Kind::Zset),
        (PENDING, Kind::List),
        (WAKE, Kind::Zset),
    ];
    let (settle, keys) = held(
        s,
        args,
        (structures, true),
        Some(l.meta.retried),
        Leaves::Active,
    )?;

    // the jobs ready now (delay 0) go on their priority's list
    let now_ready: Vec<usize> = (0..settle.ids.len())
        .filter(|&j| args.job_number(j, 2) == 0)
        .collect();
    let plan = {
        let ids: Vec<Str> = now_ready.iter().map(|&j| settle.ids[j]).collect();
        let rows: Vec<Owned> = now_ready
            .iter()
            .map(|&j| ctx.string(settle.rows[j].bytes()))
            .collect();
        ready::plan_rows(s, &settle.meta, &ids, &rows, &vec![true; ids.len()])?
    };
    s.probe()?;
    Ok(Checked {
        settle,
        keys,
        with: (now_ready, plan),
    })
}

/// RETRY's step 6, after [`check`]: every write, and the reply.
pub fn write<'a>(s: &Scope<'a>, args: &Args<'a>, checked: Checked<'a>) -> Reply<'a> {
    let (ctx, l) = (s.ctx, lit());
    let Checked {
        settle,
        keys: [active, schedule, pending, wake],
        with: (now_ready, plan),
    } = checked;
    let ids = &settle.ids;
    let was_empty = !ready::any(s, &settle.meta);
    leave_active(s, &settle, &active);
    ready::push(s, &settle.meta, &pending, &plan, false);
    let now = s.now();
    let dues: Vec<i64> = (0..ids.len())
        .map(|j| now + args.job_number(j, 2))
        .collect();
    let due_strs: Vec<Owned> = dues.iter().map(|&d| ctx.int(d)).collect();
    let mut zadd: Vec<Str> = vec![schedule.name()];
    let mut earliest: Option<i64> = None;
    for (j, &id) in ids.iter().enumerate() {
        let ready = args.job_number(j, 2) == 0;
        if !ready {
            schedule.zadd(dues[j] as f64, id);
            zadd.push(due_strs[j].as_str());
            zadd.push(id);
            earliest = Some(earliest.map_or(dues[j], |e| e.min(dues[j])));
        }
        let state = if ready {
            l.state.pending
        } else {
            l.state.scheduled
        };
        let row = ctx.open(settle.rows[j].as_str());
        let delay = ctx.int(args.job_number(j, 2));
        row.hset(&[
            (l.row.state, state),
            (l.row.due_ms, due_strs[j].as_str()),
            (l.row.delay_ms, delay.as_str()),
            (l.row.reason, args.job_bytes(j, 3)),
        ]);
        ring::push(&row, (l.row.failures, l.row.failure, FAILURES_KEPT), args.job_bytes(j, 4));
    }
    if zadd.len() > 1 {
        ctx.replicate(c"ZADD", &zadd);
    }
    let reply = settle.done();
    if let Some(earliest) = earliest {
        if wake.zadd_lt(earliest as f64, l.wake.due) {
            let at = ctx.int(earliest);
            ctx.replicate(c"ZADD", &[wake.name(), l.lt, at.as_str(), l.wake.due]);
        }
    }
    if !now_ready.is_empty() && was_empty {
        mark_ready(&wake);
    }
    ctx.signal_ready(pending.name());
    settle.freed(s);
    for (j, &id) in ids.iter().enumerate() {
        let entry = Fields {
            jobs: Some(id),
            reason: Some(args.job_bytes(j, 3)),
            until: Some(due_strs[j].as_str()),
            ..blank()
        };
        settle.events.add(l.event.retried, &entry);
    }
    reply
}
