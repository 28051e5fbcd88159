//! The verbs' steps 5–6, one file each (`run`, which the generated table `table::VERBS`
//! names), and the pieces several share (`scope`: access to derived keys; `admit`:
//! ENQUEUE/SCHEDULE/TICK; `leases`: the token check of ACK/RETRY/BURY/EXTEND/PROGRESS; `move_due`:
//! PROMOTE/REAP/CLAIM's mover; `ready`: the ready lists by (lane, priority); `lanes`: a laned
//! queue's ring and lane states; `walk`: CLAIM's walk, decided before it writes; `retention`: the
//! dead and completed sets' trimming by BURY, ACK, CLAIM and RETAIN; `events`: the events stream
//! every transition appends to; `settle`: SETTLE's parts, each the check and the write halves of
//! ACK, RETRY, BURY or RELEASE, then a CLAIM). Steps 1–4 (shape, layout, fence, gates) run in `command`
//! for every verb before its handler; a handler checks its domain, then writes everything or
//! nothing (`docs/WIRE.md`).

// One module per verb (`pub mod <verb>;`), generated from the spec with the table that names
// their handlers; below, the pieces verbs share.
include!("handlers.rs");

pub mod admit;
pub mod dedup;
pub mod events;
pub mod flow_opts;
pub mod flows;
pub mod history;
pub mod lanes;
pub mod leases;
pub mod limits;
pub mod move_due;
pub mod ready;
pub mod retention;
pub mod ring;
pub mod scope;
pub mod walk;

use crate::ffi::{self, Key, Kind, Str};
use crate::gates;
use crate::literals::lit;
use crate::wire::Refusal;

/// Step 5: no job twice in one call (the first id seen again is refused).
pub fn once(ids: &[Str]) -> Result<(), Refusal> {
    let mut seen = std::collections::HashSet::with_capacity(ids.len());
    for id in ids {
        if !seen.insert(id.bytes()) {
            return Err(Refusal::Repeated(id.bytes().to_vec()));
        }
    }
    Ok(())
}

/// Step 5: the ids whose membership of the sorted set `key` is `member` (a missing key has none),
/// in order, as a refusal names them (the twin of the prelude's `emq_members`).
pub fn members<'i>(
    key: &Key,
    ids: impl IntoIterator<Item = Str<'i>>,
    member: bool,
) -> Vec<Vec<u8>> {
    let holds = |id: Str| key.kind() == Kind::Zset && key.zscore(id).is_some();
    ids.into_iter()
        .filter(|&id| holds(id) == member)
        .map(|id| id.bytes().to_vec())
        .collect()
}

/// Step 5: a counter the verb will increment, as HINCRBY reads it and bounded (0 when missing).
pub fn counter(key: &Key, field: Str) -> Result<i64, Refusal> {
    match key.hget(field) {
        None => Ok(0),
        Some(s) => gates::bounded_counter(s.bytes()).ok_or(Refusal::Counter),
    }
}

/// Step 6: `field` of `key` set to `value` (checked by [`counter`]) plus `by`, replicated as HSET.
pub fn add(key: &Key, field: Str, value: i64, by: i64) -> i64 {
    let total = value + by;
    let s = key.ctx().int(total);
    key.hset(&[(field, s.as_str())]);
    total
}

/// Step 5: whether the queue's `meta` says it is paused (`paused 1`).
pub fn paused(meta: &Key) -> bool {
    let field = lit().meta.paused;
    meta.kind() == Kind::Hash && meta.hget(field).is_some_and(|p| p.bytes() == b"1")
}

/// Step 6: the `ready` marker on `wake` (`ZADD wake 0 ready`), replicated.
pub fn mark_ready(wake: &Key) {
    let l = lit();
    wake.zadd(0.0, l.wake.ready);
    let ctx = wake.ctx();
    ctx.replicate(c"ZADD", &[wake.name(), l.zero, l.wake.ready]);
}

/// Step 6: no `ready` marker on `wake` (`ZREM wake ready` when there), replicated.
pub fn unmark_ready(wake: &Key) {
    let l = lit();
    if wake.zrem(l.wake.ready) {
        wake.ctx().replicate(c"ZREM", &[wake.name(), l.wake.ready]);
    }
}

/// Step 6 of RUN and REQUEUE: `ids` leave the sorted set `from` for the head of their ready lists
/// (`plan`), replicated; the `ready` marker on `wake` when the queue had no ready job before
/// (`was_empty`), and waiting claims told.
pub fn moved_to_head(
    s: &scope::Scope,
    meta: &Key,
    (from, pending, wake): (&Key, &Key, &Key),
    ids: &[Str],
    plan: &ready::Plan,
    was_empty: bool,
) {
    for &id in ids {
        from.zrem(id);
    }
    let mut args: Vec<Str> = Vec::with_capacity(ids.len() + 1);
    args.push(from.name());
    args.extend_from_slice(ids);
    s.ctx.replicate(c"ZREM", &args);
    ready::push(s, meta, pending, plan, false);
    if was_empty {
        mark_ready(wake);
    }
    s.ctx.signal_ready(pending.name());
}

/// Step 6: a missing `meta` made as a queue's first use makes it: `wire <WIRE> created_ms <now>`.
pub fn made(meta: &Key, now: Str) {
    if meta.kind() == Kind::Empty {
        let l = lit();
        meta.hset(&[(l.meta.wire, l.wire), (l.meta.created_ms, now)]);
    }
}

/// Step 6: [`made`] at the server's time now.
pub fn made_now(meta: &Key) {
    if meta.kind() == Kind::Empty {
        made(meta, meta.ctx().int(ffi::now_ms()).as_str());
    }
}
