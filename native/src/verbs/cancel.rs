//! `EMQ.CANCEL 1 <meta> <reason> (<id>)…`: cancels jobs from anywhere. A pending or scheduled job
//! leaves its ready list or the schedule, a flow's waiting parent leaves `waiting` (its unfinished
//! children cancelled, as REMOVE's), an active job leaves active (its token kept: its worker's
//! settle is refused as for a lost lease, its EXTEND `cancelled`), and each is buried with the
//! reason and `cancelled_ms`; a flow's child cancelled tells its parent as a failure with the reason
//! (under its policy, as BURY's settle hook); a finished job (completed or dead) is left as it is.
//! Reply: one status per id (0 no row, 1 waited, 2 active, 3 left). One `cancelled` event.

use super::dedup;
use super::events::{blank, Fields};
use super::flows;
use super::lanes;
use super::limits;
use super::ready;
use super::scope::Scope;
use super::{add, counter, once, unmark_ready};
use crate::command::{Args, Reply};
use crate::ffi::{Kind, Str};
use crate::keyspace::{ACTIVE, COMPLETED, DEAD, PENDING, SCHEDULE, WAITING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// No row.
const GONE: i64 = 0;
/// Waited (pending, scheduled, or a flow's parent waiting for its children): buried now.
const WAITED: i64 = 1;
/// Was active: buried now, its worker told at its next EXTEND.
const RAN: i64 = 2;
/// Finished (completed or dead): left as it is.
const LEFT: i64 = 3;

/// Runs CANCEL's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let ids = args.ids();
    once(&ids)?;
    let meta = s.meta()?;
    s.structure(PENDING, Kind::List)?;
    let schedule = s.structure(SCHEDULE, Kind::Zset)?;
    let dead = s.structure(DEAD, Kind::Zset)?;
    let completed = s.structure(COMPLETED, Kind::Zset)?;
    let active = s.structure(ACTIVE, Kind::Zset)?;
    s.structure(WAKE, Kind::Zset)?;
    let events = super::events::Events::open(s, &meta)?;
    let waiting = s.structure(WAITING, Kind::Zset)?;
    let (rows, exists) = s.rows(ids.iter().map(|id| id.bytes()))?;
    let within = |set: &crate::ffi::Key, id: Str| set.kind() == Kind::Zset && set.zscore(id).is_some();
    // each job's status as its sets say; a row in none of them is tried on its ready list (WAITED)
    let status: Vec<i64> = ids
        .iter()
        .enumerate()
        .map(|(j, &id)| match () {
            _ if !exists[j] => GONE,
            _ if within(&active, id) => RAN,
            _ if within(&dead, id) || within(&completed, id) => LEFT,
            _ => WAITED,
        })
        .collect();
    // a flow's parent waiting for its children leaves `waiting`, not a ready list
    let parents: Vec<bool> = ids
        .iter()
        .zip(&status)
        .map(|(&id, &st)| st == WAITED && within(&waiting, id))
        .collect();
    let ran: Vec<bool> = status.iter().map(|&st| st == RAN).collect();
    let jobs: Vec<(Str, Str)> = ids
        .iter()
        .zip(&rows)
        .zip(&status)
        .filter_map(|((&id, row), &st)| (st == WAITED || st == RAN).then_some((id, row.as_str())))
        .collect();
    let going = dedup::letting_go(s, &jobs)?;
    // a ready job is on its lane's list of its priority
    let plan = ready::plan_rows(s, &meta, &ids, &rows, &exists)?;
    // the active ones free a slot of a limited queue and lower their lane's `active`, as BURY's
    let freeing = ran.contains(&true) && limits::freeing(s, &meta)?;
    let counted = lanes::counted(s, &meta, &rows, &ran)?;
    let buried = counter(&meta, l.meta.buried)?;
    s.probe()?;

    let now = s.now();
    if let Some(going) = &going {
        dedup::let_go(ctx, going, now);
    }
    let at = ctx.int(now);
    let mut replies = status.clone();
    let (mut took, mut gone) = (false, Vec::new());
    for (j, (&id, row)) in ids.iter().zip(&rows).enumerate() {
        match status[j] {
            RAN => {
                active.zrem(id);
                ctx.replicate(c"ZREM", &[active.name(), id]);
            }
            WAITED if parents[j] => {
                waiting.zrem(id);
                ctx.replicate(c"ZREM", &[waiting.name(), id]);
            }
            WAITED if within(&schedule, id) => {
                schedule.zrem(id);
                ctx.replicate(c"ZREM", &[schedule.name(), id]);
            }
            WAITED if ready::remove(s, &meta, &plan, plan.group_of(j), id) => took = true,
            WAITED => {
                replies[j] = LEFT;
                continue;
            }
            _ => continue,
        }
        gone.push(id);
        dead.zadd(now as f64, id);
        ctx.replicate(c"ZADD", &[dead.name(), at.as_str(), id]);
        ctx.open(row.as_str()).hset(&[
            (l.row.state, l.state.dead),
            (l.row.reason, args.bytes(0)),
            (l.row.buried_ms, at.as_str()),
            (l.row.cancelled_ms, at.as_str()),
        ]);
    }
    lanes::lower(s, &meta, &counted);
    if !gone.is_empty() {
        add(&meta, l.meta.buried, buried, gone.len() as i64);
    }
    // after `buried` was written: a parent buried by a child's policy counts on top (as BURY's)
    for (j, &id) in ids.iter().enumerate() {
        if parents[j] && replies[j] == WAITED {
            flows::cancel_unfinished(s, &ctx.open(rows[j].as_str()), id.bytes(), true);
        }
    }
    let told: Vec<_> = gone.iter().map(|id| s.row_of(id.bytes())).collect();
    flows::settled(s, &told, flows::FAILED, |_| args.bytes(0));
    // the last ready job a claim could reach gone: no `ready` marker left for workers to wake on
    // (a fresh handle: a parent woken above may have made `wake` since step 5 opened it missing)
    if took && !ready::any(s, &meta) {
        unmark_ready(&ctx.open_named(s.name(WAKE)));
    }
    if lanes::recheck(s, &meta, &counted) {
        super::mark_ready(&ctx.open_named(s.name(WAKE)));
    }
    limits::freed(s, &meta, freeing);
    if let Some(list) = events.list(gone.iter().map(|id| id.bytes())) {
        let entry = Fields {
            jobs: Some(list.as_str()),
            reason: Some(args.bytes(0)),
            ..blank()
        };
        events.add(l.event.cancelled, &entry);
    }
    Ok(Reply::Ints(replies))
}
