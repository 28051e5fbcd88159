//! `EMQ.ENQUEUE 1 <meta> (<id> <opts> <payload>)…`: new rows in state `pending`, the ids pushed on
//! the head of pending in argument order; a `ready` marker on wake when pending was empty. A job
//! whose `dedup` key is held is not admitted (`admit`); events `enqueued`, then `deduplicated`.
//! Reply: the count, or `[admitted, (place,
//! holder, outcome)…]` when a job carried a key. Its writes ([`pushed`]) are also TICK's: a
//! scheduler's jobs are admitted as ENQUEUE's.

use super::admit::{admit, admitted, fields, Admission};
use super::mark_ready;
use super::ready::{self, Place};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{Ctx, Key, Kind, Str};
use crate::keyspace::PENDING;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs ENQUEUE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let a = admit(s, args, PENDING, Kind::List, 1)?;
    s.probe()?;

    let now = s.ctx.int(a.now);
    admitted(s, &a, args, now.as_str(), |j| args.job_bytes(j, 2), None);
    pushed(s, &a, now.as_str(), |j| fields(&a, args, j, 2, 1));
    a.announce(lit().event.enqueued, None);
    Ok(a.reply())
}

/// Step 6 of an admission into pending (after [`admitted`]): per admitted job `HSET row state
/// pending` with the fields `fields(j)` gives (its payload first), `attempts 0 created_ms <now>`,
/// and its priority and lane when not the defaults; the ids pushed on their ready lists in order; `ready` on wake when
/// the queue had no ready job.
pub fn pushed<'b>(
    s: &Scope,
    a: &Admission,
    now: Str<'b>,
    fields: impl Fn(usize) -> Vec<(Str<'b>, Str<'b>)>,
) {
    let (ctx, l) = (s.ctx, lit());
    for &j in &a.admitted {
        let mut row = vec![(l.row.state, l.state.pending)];
        row.extend(fields(j));
        row.extend([(l.row.attempts, l.zero), (l.row.created_ms, now)]);
        let key = ctx.open(a.rows[j].as_str());
        key.hset(&row);
        placed(ctx, &key, &a.places[j]);
    }
    if a.admitted.is_empty() {
        return;
    }
    if let Some(plan) = &a.ready {
        ready::push(s, &a.meta, &a.structure, plan, false);
    }
    if a.idle {
        mark_ready(&a.wake);
    }
}

/// A row's `priority` field, when not 0, and its `lane`, when not the default lane (replicated).
pub fn placed(ctx: Ctx, row: &Key, (lane, p): &Place) {
    let l = lit();
    if *p > 0 {
        let text = ctx.int(*p as i64);
        row.hset(&[(l.row.priority, text.as_str())]);
    }
    if !lane.is_empty() {
        let text = ctx.string(lane);
        row.hset(&[(l.row.lane, text.as_str())]);
    }
}
