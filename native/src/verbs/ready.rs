//! The ready lists (the twin of `lib/lua/ready.ts`): a job of lane L at priority p is ready in
//! `ready:<p>:<L>` — the default lane's priority 0 in `pending` —, with p ≥ 1 in the sorted set
//! `levels:<L>` while that list holds ids and `meta`'s `prioritized` counting every id not in
//! `pending`. Every verb that makes jobs ready pushes them through one [`Plan`] — step 5 reads each
//! job's place and types the keys it will write, step 6 pushes, group by (lane, priority), and in a
//! laned queue scores the lane and runs its insert check (`lanes`). Docs: docs/WIRE.md,
//! "Priorities", and docs/design/lanes.md §10.

use super::lanes::{self, Live};
use super::scope::Scope;
use super::{add, counter};
use crate::ffi::{Ctx, Key, Kind, Owned, Str};
use crate::keyspace::{valid_name, PENDING, RING};
use crate::literals::lit;
use crate::spec::MAX_PRIORITY;
use crate::wire::Refusal;

/// A stored priority as an admission writes it (1 to `MAX_PRIORITY`, no leading zero), else 0.
pub fn parse_priority(v: &[u8]) -> u64 {
    let ok = !v.is_empty() && v.len() <= 7 && v[0] != b'0' && v.iter().all(u8::is_ascii_digit);
    let n = if ok {
        v.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'))
    } else {
        0
    };
    if n <= MAX_PRIORITY as u64 {
        n
    } else {
        0
    }
}

/// Where a job is ready: its lane (empty: the default lane) and its priority.
pub type Place = (Vec<u8>, u64);

/// The place of the row named `row` (the default lane at 0 when it is missing or says none).
pub fn place_of(ctx: Ctx, row: Str) -> Place {
    let key = ctx.open(row);
    if key.kind() != Kind::Hash {
        return (Vec::new(), 0);
    }
    let p = key
        .hget(lit().row.priority)
        .map_or(0, |v| parse_priority(v.bytes()));
    (lane_in(&key), p)
}

/// The lane of the open row `key` (the default lane, empty, when it says none or no valid name).
pub fn lane_in(key: &Key) -> Vec<u8> {
    key.hget(lit().row.lane)
        .map(|v| v.bytes().to_vec())
        .filter(|v| valid_name(v))
        .unwrap_or_default()
}

/// The jobs of one plan bound for one list: a lane at a priority.
pub struct Group<'a> {
    /// The lane (empty: the default lane).
    pub lane: Owned<'a>,
    /// The priority.
    pub p: u64,
    /// The list's name.
    pub list: Owned<'a>,
    /// The ids, in call order.
    pub ids: Vec<Owned<'a>>,
}

impl Group<'_> {
    /// Whether its list is `pending` (the default lane at priority 0).
    pub fn pending(&self) -> bool {
        self.p == 0 && self.lane.bytes().is_empty()
    }
}

/// Jobs about to be made ready, grouped by (lane, priority) in first-seen order.
pub struct Plan<'a> {
    /// The groups, in first-seen order.
    pub groups: Vec<Group<'a>>,
    /// Each job's place, by place in the call.
    pub places: Vec<Place>,
    /// Whether the queue is (or with these jobs becomes) laned: pushes keep the lanes.
    pub laned: bool,
}

impl<'a> Plan<'a> {
    /// The group of the job at place `j`.
    pub fn group_of(&self, j: usize) -> &Group<'a> {
        let (lane, p) = &self.places[j];
        self.groups
            .iter()
            .find(|g| g.p == *p && g.lane.bytes() == lane.as_slice())
            .expect("every place has its group")
    }
}

/// Step 5 of making `ids` ready: their places (`place(j)`), the types of the lists they go to (a
/// missing one remembered) and of their lanes' `levels:` (priorities ≥ 1), `meta`'s `prioritized`
/// when a list is not `pending`, and in a laned queue the lane keys ([`lanes::check`]).
pub fn plan<'a>(
    s: &mut Scope<'a>,
    meta: &Key,
    ids: &[Str],
    place: impl Fn(usize) -> Place,
) -> Result<Plan<'a>, Refusal> {
    let ctx = s.ctx;
    let mut p = Plan {
        groups: Vec::new(),
        places: Vec::with_capacity(ids.len()),
        laned: false,
    };
    for (j, &id) in ids.iter().enumerate() {
        let (lane, level) = place(j);
        let copy = ctx.string(id.bytes());
        let found = p
            .groups
            .iter_mut()
            .find(|g| g.p == level && g.lane.bytes() == lane);
        match found {
            Some(g) => g.ids.push(copy),
            None => p.groups.push(Group {
                lane: ctx.string(&lane),
                p: level,
                list: s.ready(&lane, level),
                ids: vec![copy],
            }),
        }
        p.places.push((lane, level));
    }
    if p.groups.is_empty() {
        return Ok(p);
    }
    p.laned = p.groups.iter().any(|g| !g.lane.bytes().is_empty()) || lanes::laned(meta).is_some();
    for g in p.groups.iter().filter(|g| !g.pending()) {
        s.expect(g.list.as_str(), Kind::List)?;
        if g.p > 0 {
            let levels = s.levels(g.lane.bytes());
            s.expect(levels.as_str(), Kind::Zset)?;
        }
    }
    if p.groups.iter().any(|g| !g.pending()) {
        counter(meta, lit().meta.prioritized)?;
    }
    if p.laned {
        lanes::check(s, p.groups.iter().map(|g| g.lane.bytes()), false)?;
    }
    Ok(p)
}

/// A plan of jobs whose rows [`Scope::rows`] typed: each row's place (the default lane at 0 when
/// missing).
pub fn plan_rows<'a>(
    s: &mut Scope<'a>,
    meta: &Key,
    ids: &[Str],
    rows: &[Owned],
    exists: &[bool],
) -> Result<Plan<'a>, Refusal> {
    let ctx = s.ctx;
    plan(s, meta, ids, |j| {
        if exists[j] {
            place_of(ctx, rows[j].as_str())
        } else {
            (Vec::new(), 0)
        }
    })
}

/// Step 6 of a group's list write: the priority in `levels:<lane>` and `prioritized` + `n` when
/// the list is not `pending` (another write of this call may have counted already: read now).
fn counted(s: &Scope, meta: &Key, g: &Group, n: i64) {
    let (ctx, l) = (s.ctx, lit());
    if g.p > 0 {
        let levels = ctx.open_named(s.levels(g.lane.bytes()));
        let p = ctx.int(g.p as i64);
        if n > 0 {
            levels.zadd(g.p as f64, p.as_str());
            ctx.replicate(c"ZADD", &[levels.name(), p.as_str(), p.as_str()]);
        } else {
            let list = ctx.open(g.list.as_str());
            if (list.kind() != Kind::List || list.value_len() == 0) && levels.zrem(p.as_str()) {
                ctx.replicate(c"ZREM", &[levels.name(), p.as_str()]);
            }
        }
    }
    if !g.pending() {
        let total = counter(meta, l.meta.prioritized).unwrap_or(0);
        add(meta, l.meta.prioritized, total, n);
    }
}

/// Step 6: the plan's ids pushed on their lists (`tail`: RPUSH, claimed next of its level; else
/// LPUSH), group by group, `levels:` and `prioritized` following, and in a laned queue the lane's
/// score and its insert check; replicated. `pending` is the queue's, already open.
pub fn push(s: &Scope, meta: &Key, pending: &Key, plan: &Plan, tail: bool) {
    let ctx = s.ctx;
    let verb = if tail { c"RPUSH" } else { c"LPUSH" };
    let live = plan.laned.then(|| Live::open(s, meta));
    for g in &plan.groups {
        let opened;
        let list = if g.pending() {
            pending
        } else {
            opened = ctx.open(g.list.as_str());
            &opened
        };
        let mut args: Vec<Str> = vec![list.name()];
        for id in &g.ids {
            list.push(tail, id.as_str());
            args.push(id.as_str());
        }
        ctx.replicate(verb, &args);
        counted(s, meta, g, g.ids.len() as i64);
        if !g.pending() {
            // a waiting claim waits on pending's name
            ctx.signal_ready(pending.name());
        }
        if let Some(live) = &live {
            live.add_ready(g.lane.as_str(), g.ids.len() as i64);
            live.insert(g.lane.as_str());
        }
    }
}

/// Step 6 of REMOVE for a ready job of group `g` (its plan's): `LREM` from its list, and when it was
/// there `prioritized` − 1 and `levels:` without its priority once that list is empty; in a laned
/// queue the lane's score − 1, the ring left when that was its last ready job, and its idle check.
/// Replicated. Whether the job was ready.
pub fn remove(s: &Scope, meta: &Key, plan: &Plan, g: &Group, id: Str) -> bool {
    let (ctx, l) = (s.ctx, lit());
    let list = ctx.open(g.list.as_str());
    if list.list_remove(id.bytes()) == 0 {
        return false;
    }
    ctx.replicate(c"LREM", &[list.name(), l.zero, id]);
    drop(list);
    counted(s, meta, g, -1);
    if plan.laned {
        let live = Live::open(s, meta);
        live.add_ready(g.lane.as_str(), -1);
        live.leave(g.lane.as_str());
        live.idle(g.lane.as_str());
    }
    true
}

/// Whether the queue has a ready job a claim may reach: laned, a lane in the ring; else one in
/// `pending` or counted in `prioritized` (as the Lua twin's `emq_ready_any`).
pub fn any(s: &Scope, meta: &Key) -> bool {
    if lanes::laned(meta).is_some() {
        let ring = s.ctx.open_named(s.name(RING));
        return ring.kind() == Kind::List && ring.value_len() > 0;
    }
    let pending = s.ctx.open_named(s.name(PENDING));
    if pending.kind() == Kind::List && pending.value_len() > 0 {
        return true;
    }
    // decimal digits, not all 0 (as the Lua twin reads it)
    meta.kind() == Kind::Hash
        && meta.hget(lit().meta.prioritized).is_some_and(|v| {
            let b = v.bytes();
            !b.is_empty() && b.iter().all(u8::is_ascii_digit) && b.iter().any(|&d| d != b'0')
        })
}

#[cfg(test)]
mod tests {
    use super::parse_priority;

    #[test]
    fn priorities_as_admissions_write_them() {
        assert_eq!(parse_priority(b"3"), 3);
        assert_eq!(parse_priority(b"2097151"), 2_097_151);
        for bad in [&b""[..], b"0", b"03", b"2097152", b"-1", b"1x", b"99999999"] {
            assert_eq!(parse_priority(bad), 0, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
