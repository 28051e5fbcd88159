//! `EMQ.REQUEUE 1 <meta> <limit> <keep_attempts> [<id>…]`: dead jobs go back to the head of pending
//! with a fresh attempt budget (keep_attempts 1: their attempts kept) — the ids given (each must be dead: else every stray id is named), or without ids
//! up to limit, oldest first; a `ready` marker on wake when pending was empty; one `requeued` event
//! names them. Reply: how many moved.

use super::events::Events;
use super::ready;
use super::scope::Scope;
use super::{members, moved_to_head, once};
use crate::command::{Args, Reply};
use crate::ffi::{Kind, Owned, Str};
use crate::keyspace::{DEAD, PENDING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs REQUEUE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let given = args.ids();
    once(&given)?;
    let meta = s.meta()?;
    let dead = s.structure(DEAD, Kind::Zset)?;
    let pending = s.structure(PENDING, Kind::List)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    let events = Events::open(s, &meta)?;
    let ids: Vec<Owned> = if given.is_empty() {
        dead.due(f64::INFINITY, args.number(0) as u64)
    } else {
        given.iter().map(|id| ctx.string(id.bytes())).collect()
    };
    let (rows, exists) = s.rows(ids.iter().map(|id| id.bytes()))?;
    let stray = if given.is_empty() {
        Vec::new()
    } else {
        members(&dead, ids.iter().map(Owned::as_str), false)
    };
    let moved: Vec<Str> = ids.iter().map(Owned::as_str).collect();
    let plan = ready::plan_rows(s, &meta, &moved, &rows, &exists)?;
    s.probe()?;
    if !stray.is_empty() {
        return Err(Refusal::NotDead(stray));
    }
    if ids.is_empty() {
        return Ok(Reply::Int(0));
    }

    let was_empty = !ready::any(s, &meta);
    moved_to_head(s, &meta, (&dead, &pending, &wake), &moved, &plan, was_empty);
    for (row, &exists) in rows.iter().zip(&exists) {
        if exists {
            let key = ctx.open(row.as_str());
            if args.number(1) == 1 {
                key.hset(&[(l.row.state, l.state.pending)]);
            } else {
                key.hset(&[(l.row.state, l.state.pending), (l.row.attempts, l.zero)]);
            }
            // the token too: no claim time until the next claim (BullMQ's reprocessJob deletes
            // processedOn)
            key.hdel(&[l.row.reason, l.row.buried_ms, l.row.cancelled_ms, l.row.token]);
        }
    }
    events.jobs(l.event.requeued, ids.iter().map(|id| id.bytes()));
    Ok(Reply::Int(ids.len() as i64))
}
