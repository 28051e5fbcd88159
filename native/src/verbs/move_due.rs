//! The mover PROMOTE, REAP and CLAIM share (the twin of `lib/lua/move_due.ts`), in two halves so
//! that a verb checks everything before it writes anything: [`select`] takes up to `limit` ids of
//! a sorted set whose score is due (≤ now), ascending, type-checks their rows and plans their ready
//! pushes (each to its priority's list, `ready`); [`apply`] moves them and marks the rows that
//! exist `pending`.

use super::events::Events;
use super::lanes;
use super::mark_ready;
use super::ready::{self, Plan};
use super::scope::Scope;
use crate::command::Reply;
use crate::ffi::{Key, Kind, Owned, Str};
use crate::keyspace::{ACTIVE, PENDING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Due ids of one sorted set, with their rows.
pub struct Due<'a> {
    /// The ids, ascending (score, then member).
    pub ids: Vec<Owned<'a>>,
    /// Their rows' names.
    pub rows: Vec<Owned<'a>>,
    /// Whether each row exists (a missing one is moved all the same, and dropped by a claim).
    pub exists: Vec<bool>,
    /// Their ready pushes.
    pub plan: Plan<'a>,
}

impl Due<'_> {
    /// How many ids.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// Up to `limit` ids of `from` with score ≤ `now`, their rows type-checked (hash or missing) and
/// their ready pushes planned.
pub fn select<'a>(
    s: &mut Scope<'a>,
    meta: &Key,
    from: &Key,
    now: i64,
    limit: u64,
) -> Result<Due<'a>, Refusal> {
    let ids = from.due(now as f64, limit);
    let (rows, exists) = s.rows(ids.iter().map(|id| id.bytes()))?;
    let strs: Vec<Str> = ids.iter().map(Owned::as_str).collect();
    let plan = ready::plan_rows(s, meta, &strs, &rows, &exists)?;
    let ids = ids.into_iter().map(|id| s.ctx.string(id.bytes())).collect();
    Ok(Due {
        ids,
        rows,
        exists,
        plan,
    })
}

/// Moves `due` from `from` onto the ready lists (`tail`: RPUSH, the next claimed of its level — expired
/// leases, whose rows count the stall in `stalls`; else LPUSH) and marks the rows that exist
/// `pending`; replicated. Returns how many moved.
pub fn apply(s: &Scope, meta: &Key, from: &Key, pending: &Key, tail: bool, due: &Due) -> usize {
    if due.is_empty() {
        return 0;
    }
    let l = lit();
    for id in &due.ids {
        from.zrem(id.as_str());
    }
    let mut args: Vec<Str> = Vec::with_capacity(due.len() + 1);
    args.push(from.name());
    args.extend(due.ids.iter().map(|id| id.as_str()));
    s.ctx.replicate(c"ZREM", &args);
    ready::push(s, meta, pending, &due.plan, tail);
    for (i, row) in due.rows.iter().enumerate() {
        if !due.exists[i] {
            continue;
        }
        let key = s.ctx.open(row.as_str());
        if tail {
            // an expired lease: its row counts the stall (a malformed count starts again from 0)
            let n = key.hget(l.row.stalls).map_or(0, |v| stalls(v.bytes()));
            let next = s.ctx.int(n + 1);
            key.hset(&[
                (l.row.state, l.state.pending),
                (l.row.stalls, next.as_str()),
            ]);
        } else {
            key.hset(&[(l.row.state, l.state.pending)]);
        }
    }
    due.len()
}

/// A row's stored `stalls`: 1 to 15 digits without a leading zero (or `0`), else 0.
fn stalls(v: &[u8]) -> i64 {
    let digits = !v.is_empty() && v.len() <= 15 && v.iter().all(u8::is_ascii_digit);
    if !digits || (v.len() > 1 && v[0] == b'0') {
        return 0;
    }
    std::str::from_utf8(v)
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(0)
}

/// PROMOTE and REAP, whole: up to `limit` due ids of the sorted set of type `from` move onto
/// pending (`tail`: RPUSH, claimed next); a `ready` marker on wake and waiting claims woken when
/// any moved; from active (REAP), the lanes' `active` lowered first and their checks last; one
/// event names the ids moved (`promoted` from schedule, `stalled` from active). Reply: how many
/// moved.
pub fn moved<'a>(
    s: &mut Scope<'a>,
    limit: i64,
    from: &[u8],
    tail: bool,
) -> Result<Reply<'a>, Refusal> {
    let ctx = s.ctx;
    let reaps = from == ACTIVE;
    let meta = s.meta()?;
    let from = s.structure(from, Kind::Zset)?;
    let pending = s.structure(PENDING, Kind::List)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    let events = Events::open(s, &meta)?;
    let due = select(s, &meta, &from, s.now(), limit as u64)?;
    // expired leases: their lanes' `active` goes down (§10.5)
    let counted = if reaps {
        lanes::counted(s, &meta, &due.rows, &due.exists)?
    } else {
        Vec::new()
    };
    s.probe()?;

    lanes::lower(s, &meta, &counted);
    let moved = apply(s, &meta, &from, &pending, tail, &due);
    let filled = lanes::recheck(s, &meta, &counted);
    if moved > 0 || filled {
        mark_ready(&wake);
    }
    if moved > 0 {
        ctx.signal_ready(pending.name());
    }
    let l = lit();
    let event = if reaps {
        l.event.stalled
    } else {
        l.event.promoted
    };
    events.jobs(event, due.ids.iter().map(|id| id.bytes()));
    Ok(Reply::Int(moved as i64))
}
