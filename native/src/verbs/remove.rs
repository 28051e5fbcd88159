//! `EMQ.REMOVE 1 <meta> <cleaned> (<id>)…`: pending, scheduled, dead and completed jobs are deleted wherever
//! they are; an active job refuses the call (its worker holds it), naming every such id. Reply:
//! how many were removed (an id without a row counts 0). Their deduplication keys are let go; one
//! `removed` event (with cleaned 1: `cleaned`, a clean's) names the ids that had a row. A lane left without ready jobs leaves the ring
//! (and goes idle); once no ready job is left for a claim, the `ready` marker leaves `wake`. A
//! flow's parent has its unfinished children cancelled (`flows::cancel_unfinished`); a flow's
//! child leaves a tombstone in place of its row (`flows::leave_tombstone`).

use super::dedup;
use super::flows;
use super::events::Events;
use super::ready;
use super::scope::Scope;
use super::{members, once, unmark_ready};
use crate::command::{Args, Reply};
use crate::ffi::{self, Kind, Str};
use crate::keyspace::{ACTIVE, COMPLETED, DEAD, PENDING, SCHEDULE, WAITING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs REMOVE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let ctx = s.ctx;
    let ids = args.ids();
    once(&ids)?;
    let meta = s.meta()?;
    s.structure(PENDING, Kind::List)?;
    let schedule = s.structure(SCHEDULE, Kind::Zset)?;
    let dead = s.structure(DEAD, Kind::Zset)?;
    let completed = s.structure(COMPLETED, Kind::Zset)?;
    let active = s.structure(ACTIVE, Kind::Zset)?;
    s.structure(WAKE, Kind::Zset)?;
    let events = Events::open(s, &meta)?;
    let waiting = s.structure(WAITING, Kind::Zset)?;
    let (rows, exists) = s.rows(ids.iter().map(|id| id.bytes()))?;
    let busy = members(&active, ids.iter().copied(), true);
    let jobs: Vec<(Str, Str)> = ids
        .iter()
        .zip(&rows)
        .zip(&exists)
        .filter_map(|((&id, row), &e)| e.then_some((id, row.as_str())))
        .collect();
    let dedup = dedup::letting_go(s, &jobs)?;
    // a ready job is on its lane's list of its priority
    let plan = ready::plan_rows(s, &meta, &ids, &rows, &exists)?;
    s.probe()?;
    if !busy.is_empty() {
        return Err(Refusal::Active(busy));
    }

    if let Some(going) = &dedup {
        dedup::let_go(ctx, going, ffi::now_ms());
    }

    let (mut removed, mut took) = (0, false);
    for (j, (&id, row)) in ids.iter().zip(&rows).enumerate() {
        if !exists[j] {
            continue;
        }
        removed += 1;
        took |= ready::remove(s, &meta, &plan, plan.group_of(j), id);
        for set in [&schedule, &dead, &completed, &waiting] {
            if set.kind() == Kind::Zset && set.zrem(id) {
                ctx.replicate(c"ZREM", &[set.name(), id]);
            }
        }
        let key = ctx.open(row.as_str());
        // a flow's child not finished yet: its parent counts it as finished, `removed`
        let (l, state, parent) = (lit(), key.hget(lit().row.state), key.hget(lit().row.parent));
        // a child parent still waiting has not finished either (a nested flow's middle)
        let unfinished = state.is_some_and(|v| {
            v.bytes() == l.state.pending.bytes() || v.bytes() == l.state.scheduled.bytes() || v.bytes() == l.state.waiting.bytes()
        });
        if unfinished && parent.is_some() {
            flows::settled(s, std::slice::from_ref(row), flows::REMOVED, |_| l.empty);
        }
        // a flow's parent: its unfinished children are cancelled
        if key.kind() == Kind::Hash && key.hget(lit().row.children).is_some() {
            flows::cancel_unfinished(s, &key, id.bytes(), true);
        }
        key.delete();
        ctx.replicate(c"DEL", &[row.as_str()]);
        // a flow's child, finished or not, leaves a tombstone: a second delivery of its creation
        // (its relay died between APPLY and UNBOX) must not make it again
        if let Some(parent) = parent {
            flows::leave_tombstone(s, &ctx.open(row.as_str()), parent.as_str());
        }
    }
    // the last ready job a claim could reach gone: no `ready` marker left for workers to wake on
    // (a fresh handle: a parent woken above may have made `wake` since step 5 opened it missing)
    if took && !ready::any(s, &meta) {
        unmark_ready(&ctx.open_named(s.name(WAKE)));
    }
    let gone = ids.iter().zip(&exists).filter(|(_, &e)| e);
    // a clean (BullMQ's `cleaned`) names its ids under another type
    let kind = if args.number(0) == 1 {
        lit().event.cleaned
    } else {
        lit().event.removed
    };
    events.jobs(kind, gone.map(|(id, _)| id.bytes()));
    Ok(Reply::Int(removed))
}
