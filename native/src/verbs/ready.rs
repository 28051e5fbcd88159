//! The ready lists (the twin of `lib/lua/ready.ts`): a job of priority 0 is ready in `pending`, one
//! of priority p ≥ 1 in `ready:<p>:`, with p in the sorted set `levels:` while that list holds ids
//! and `meta`'s `prioritized` counting them. Every verb that makes jobs ready pushes them through
//! one [`Plan`] — step 5 reads each job's priority and types the lists it will write, step 6
//! pushes — and CLAIM pops the levels in order. Docs: docs/WIRE.md, "Priorities".

use super::scope::Scope;
use super::{add, counter};
use crate::ffi::{Ctx, Key, Kind, Owned, Str};
use crate::keyspace::{LEVELS, PENDING};
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

/// The priority of the row named `row` (0 when it is missing or says none).
pub fn priority_of(ctx: Ctx, row: Str) -> u64 {
    let key = ctx.open(row);
    if key.kind() != Kind::Hash {
        return 0;
    }
    key.hget(lit().row.priority)
        .map_or(0, |v| parse_priority(v.bytes()))
}

/// The name of the ready list of priority `p`.
pub fn level(s: &Scope, p: u64) -> Vec<u8> {
    if p == 0 {
        s.name(PENDING).bytes().to_vec()
    } else {
        let mut k = s.name(b"").bytes().to_vec();
        k.extend_from_slice(format!("ready:{p}:").as_bytes());
        k
    }
}

/// Jobs about to be made ready, grouped by priority in first-seen order.
pub struct Plan<'a> {
    /// Each priority with its ids, in call order.
    lists: Vec<(u64, Vec<Owned<'a>>)>,
    /// Each job's priority, by place.
    pub prio: Vec<u64>,
}

impl Plan<'_> {
    /// The priorities it pushes to, in first-seen order.
    pub fn levels(&self) -> impl Iterator<Item = u64> + '_ {
        self.lists.iter().map(|&(p, _)| p)
    }
}

/// Step 5 of making `ids` ready: their priorities (`prio(j)`), and for priorities ≥ 1 the types of
/// `levels:` and of their lists (a missing one remembered) and `meta`'s `prioritized` counter.
pub fn plan<'a>(
    s: &mut Scope<'a>,
    meta: &Key,
    ids: &[Str],
    prio: impl Fn(usize) -> u64,
) -> Result<Plan<'a>, Refusal> {
    let mut p = Plan {
        lists: Vec::new(),
        prio: Vec::with_capacity(ids.len()),
    };
    for (j, &id) in ids.iter().enumerate() {
        let level = prio(j);
        p.prio.push(level);
        let copy = s.ctx.string(id.bytes());
        match p.lists.iter_mut().find(|(l, _)| *l == level) {
            Some((_, list)) => list.push(copy),
            None => p.lists.push((level, vec![copy])),
        }
    }
    let wanted: Vec<u64> = p.lists.iter().map(|&(l, _)| l).filter(|&l| l > 0).collect();
    if !wanted.is_empty() {
        s.structure(LEVELS, Kind::Zset)?;
        for l in wanted {
            let name = s.ctx.string(&level(s, l));
            s.expect(name.as_str(), Kind::List)?;
        }
        counter(meta, lit().meta.prioritized)?;
    }
    Ok(p)
}

/// A plan of jobs whose rows [`Scope::rows`] typed: each row's priority (0 when missing).
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
            priority_of(ctx, rows[j].as_str())
        } else {
            0
        }
    })
}

/// Step 6: the plan's ids pushed on their lists (`tail`: RPUSH, claimed next of its level; else
/// LPUSH), in order, `levels:` and `prioritized` following; replicated. `pending` is the queue's,
/// already open.
pub fn push(s: &Scope, meta: &Key, pending: &Key, plan: &Plan, tail: bool) {
    let (ctx, l) = (s.ctx, lit());
    let verb = if tail { c"RPUSH" } else { c"LPUSH" };
    for (level_p, ids) in &plan.lists {
        let opened;
        let list = if *level_p == 0 {
            pending
        } else {
            opened = ctx.open_named(ctx.string(&level(s, *level_p)));
            &opened
        };
        let mut args: Vec<Str> = vec![list.name()];
        for id in ids {
            list.push(tail, id.as_str());
            args.push(id.as_str());
        }
        ctx.replicate(verb, &args);
        if *level_p > 0 {
            let levels = ctx.open_named(s.name(LEVELS));
            let p = ctx.int(*level_p as i64);
            levels.zadd(*level_p as f64, p.as_str());
            ctx.replicate(c"ZADD", &[levels.name(), p.as_str(), p.as_str()]);
            // read now: another push of this call may have counted already (step 5 checked it)
            let total = counter(meta, l.meta.prioritized).unwrap_or(0);
            add(meta, l.meta.prioritized, total, ids.len() as i64);
            // a waiting claim waits on pending's name
            ctx.signal_ready(pending.name());
        }
    }
}

/// Step 6 of REMOVE for a job of priority `p` ≥ 1: `LREM` from its level's list, and when it was
/// there `prioritized` − 1 and `levels:` without `p` once that list is empty; replicated.
pub fn remove(s: &Scope, meta: &Key, p: u64, id: Str) {
    let (ctx, l) = (s.ctx, lit());
    let list = ctx.open_named(ctx.string(&level(s, p)));
    if list.list_remove(id.bytes()) == 0 {
        return;
    }
    ctx.replicate(c"LREM", &[list.name(), l.zero, id]);
    let total = counter(meta, l.meta.prioritized).unwrap_or(0);
    add(meta, l.meta.prioritized, total, -1);
    if list.kind() != Kind::List || list.value_len() == 0 {
        let levels = ctx.open_named(s.name(LEVELS));
        let member = ctx.int(p as i64);
        if levels.zrem(member.as_str()) {
            ctx.replicate(c"ZREM", &[levels.name(), member.as_str()]);
        }
    }
}

/// Whether the queue has a ready job (in `pending`, or counted in `prioritized`).
pub fn any(s: &Scope, meta: &Key) -> bool {
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
