//! `EMQ.RUN 1 <meta> (<id>)…`: scheduled jobs run now — each id (each must be in schedule: else
//! every stray id is named) moves to the head of pending, its row `pending` and due now, as a
//! promotion puts a due job; a `ready` marker on wake when pending was empty, and waiting claims
//! told; one `promoted` event names them. Reply: how many moved.

use super::events::Events;
use super::ready;
use super::scope::Scope;
use super::{members, moved_to_head, once};
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::keyspace::{PENDING, SCHEDULE, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs RUN's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let ids = args.ids();
    once(&ids)?;
    let meta = s.meta()?;
    let schedule = s.structure(SCHEDULE, Kind::Zset)?;
    let pending = s.structure(PENDING, Kind::List)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    let events = Events::open(s, &meta)?;
    let (rows, exists) = s.rows(ids.iter().map(|id| id.bytes()))?;
    let stray = members(&schedule, ids.iter().copied(), false);
    let plan = ready::plan_rows(s, &meta, &ids, &rows, &exists)?;
    s.probe()?;
    if !stray.is_empty() {
        return Err(Refusal::NotScheduled(stray));
    }

    let was_empty = !ready::any(s, &meta);
    let now = ctx.int(s.now());
    moved_to_head(
        s,
        &meta,
        (&schedule, &pending, &wake),
        &ids,
        &plan,
        was_empty,
    );
    for (row, &exists) in rows.iter().zip(&exists) {
        if exists {
            ctx.open(row.as_str())
                .hset(&[(l.row.state, l.state.pending), (l.row.due_ms, now.as_str())]);
        }
    }
    events.jobs(l.event.promoted, ids.iter().map(|id| id.bytes()));
    Ok(Reply::Int(ids.len() as i64))
}
