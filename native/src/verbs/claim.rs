//! `EMQ.CLAIM 1 <meta> <lease_ms> <count> <block_ms>` (the twin of `lib/lua/claim.ts`). First the
//! queue's upkeep: due scheduled ids move to the head of pending and expired leases to its tail (at
//! most `CLAIM_MOVE_LIMIT` each). Then, unless the queue is paused, up to count ids are popped from
//! the tail into active at now + lease_ms, each with attempts + 1 and a fresh token from `meta`'s
//! `tokens` (raised to now × `TOKENS_PER_MS` first when below it); tail ids whose row is missing are popped and dropped. Everything is checked first, on
//! the list as it will be after the moves, and written after. With nothing claimed, block_ms > 0
//! and a caller that may wait, the client waits on pending (at most until the next due time); a
//! signal runs the claim again. Deduplication windows that ended are dropped (`dedup::expired`).
//! Reply `[next_ms, [id, payload, attempts, token, opts]…]`.

use super::dedup;
use super::limits::{self, Tat};
use super::move_due::{apply, select, Due};
use super::ready;
use super::retention;
use super::scope::Scope;
use super::{add, counter, paused};
use crate::command::{Args, Claimed, Reply};
use crate::ffi::{self, Key, Kind, Owned, Str};
use crate::keyspace::{ACTIVE, DEAD, LEVELS, PENDING, SCHEDULE, WAKE};
use crate::literals::lit;
use crate::spec::{CLAIM_MOVE_LIMIT, TOKENS_PER_MS};
use crate::wire::Refusal;

/// A job the walk will claim: its id, row and attempts after this claim.
struct Pick<'a> {
    id: Owned<'a>,
    row: Owned<'a>,
    attempts: i64,
}

/// Runs CLAIM's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (lease, count, block) = (args.number(0), args.number(1) as usize, args.number(2));
    let (ctx, l) = (s.ctx, lit());
    let meta = s.meta()?;
    let pending = s.structure(PENDING, Kind::List)?;
    let active = s.structure(ACTIVE, Kind::Zset)?;
    let schedule = s.structure(SCHEDULE, Kind::Zset)?;
    let dead = s.structure(DEAD, Kind::Zset)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    let now = ffi::now_ms();
    let due = select(s, &meta, &schedule, now, CLAIM_MOVE_LIMIT)?;
    let expired = select(s, &meta, &active, now, CLAIM_MOVE_LIMIT)?;
    let paused = paused(&meta);
    // The limits: paused or parked, nothing; else at most the concurrency limit's free slots (the
    // expired leases leave active first) and the rate limit's tokens.
    let lim = limits::read(&meta);
    let parked = lim.parked.is_some_and(|p| p > now);
    let (mut room, mut busy, mut allowed, mut tat) = (count, 0, 0, Tat::default());
    if let Some(conc) = lim.conc {
        let card = if active.kind() == Kind::Zset {
            active.value_len()
        } else {
            0
        };
        busy = card as i64 - expired.len() as i64;
        room = room.min((conc - busy).max(0) as usize);
    }
    if let Some((rate, stored)) = lim.rate {
        (allowed, tat) = rate.tokens(stored, now);
        room = room.min(allowed as usize);
    }

    // The walk, writing nothing, level by level: priority 0 (pending) first, then every priority
    // of `levels:` and of the ids this call makes ready, lowest first. In each level the
    // candidates come in the order RPOP will return them after the moves: its expired ids from the
    // last RPUSHed, its list from the tail, its due ids in LPUSH order.
    let claimable = !paused && !parked;
    let mut picks: Vec<Pick> = Vec::new();
    // (priority, list name, how many the walk pops from it)
    let mut pops: Vec<(u64, Owned, usize)> = Vec::new();
    if claimable {
        let k = walk(s, &mut picks, room, (&expired, &due), 0, &pending)?;
        if k > 0 {
            pops.push((0, s.name(PENDING), k));
        }
    }
    if claimable && picks.len() < room {
        let name = s.name(LEVELS);
        let lk = s.open(name.as_str())?;
        if !lk.is_empty_or(Kind::Zset) {
            return Err(Refusal::WrongType);
        }
        let mut order: Vec<u64> = Vec::new();
        if lk.kind() == Kind::Zset {
            for m in lk.due(f64::INFINITY, u64::MAX) {
                let p = ready::parse_priority(m.bytes());
                if p > 0 && !order.contains(&p) {
                    order.push(p);
                }
            }
        }
        drop(lk);
        for p in expired.plan.groups.iter().chain(&due.plan.groups).map(|g| g.p) {
            if p > 0 && !order.contains(&p) {
                order.push(p);
            }
        }
        order.sort_unstable();
        for p in order {
            if picks.len() >= room {
                break;
            }
            let name = s.ready(b"", p);
            let list = s.open(name.as_str())?;
            if !list.is_empty_or(Kind::List) {
                return Err(Refusal::WrongType);
            }
            let k = walk(s, &mut picks, room, (&expired, &due), p, &list)?;
            drop(list);
            if k > 0 {
                pops.push((p, name, k));
            }
        }
        if pops.last().is_some_and(|&(p, ..)| p > 0) {
            counter(&meta, l.meta.prioritized)?;
        }
    }
    let (tokens, claimed) = if picks.is_empty() {
        (0, 0)
    } else {
        (
            counter(&meta, l.meta.tokens)?,
            counter(&meta, l.meta.claimed)?,
        )
    };
    let victims = retention::select(s, &meta, &dead, now, 0)?;
    // ended deduplication windows: only on a queue that ever took a key (meta's dedup)
    let deduplicates =
        meta.kind() == Kind::Hash && meta.hget(l.meta.dedup).is_some_and(|v| v.bytes() == b"1");
    let windows = if deduplicates {
        dedup::expired(s, now)?
    } else {
        None
    };
    s.probe()?;

    // Writes.
    let moved = apply(s, &meta, &schedule, &pending, false, &due)
        + apply(s, &meta, &active, &pending, true, &expired);
    let mut gone = 0;
    for (p, name, k) in &pops {
        let list = if *p == 0 {
            None
        } else {
            Some(ctx.open(name.as_str()))
        };
        for _ in 0..*k {
            list.as_ref().unwrap_or(&pending).pop_tail();
        }
        let n = ctx.int(*k as i64);
        ctx.replicate(c"RPOP", &[name.as_str(), n.as_str()]);
        if *p > 0 {
            gone += *k as i64;
        }
    }
    if gone > 0 {
        let total = counter(&meta, l.meta.prioritized).unwrap_or(0);
        add(&meta, l.meta.prioritized, total, -gone);
    }
    for (p, name, _) in pops.iter().filter(|&&(p, ..)| p > 0) {
        let list = ctx.open(name.as_str());
        if list.kind() != Kind::List || list.value_len() == 0 {
            let levels_key = ctx.open_named(s.name(LEVELS));
            let member = ctx.int(*p as i64);
            if levels_key.zrem(member.as_str()) {
                ctx.replicate(c"ZREM", &[levels_key.name(), member.as_str()]);
            }
        }
    }
    retention::apply(s, &dead, &victims);
    if let Some((d, keys)) = &windows {
        dedup::drop_expired(ctx, d, keys);
    }
    let mut jobs = Vec::with_capacity(picks.len());
    if !picks.is_empty() {
        let k = picks.len() as i64;
        // above now × TOKENS_PER_MS: a queue made again never repeats a token of an earlier life
        let floor = tokens.max(now * TOKENS_PER_MS);
        let first = add(&meta, l.meta.tokens, floor, k) - k + 1;
        add(&meta, l.meta.claimed, claimed, k);
        if let Some((rate, _)) = lim.rate {
            tat = rate.take(tat, k);
            let v = ctx.string(format!("{} {}", tat.q, tat.r).as_bytes());
            meta.hset(&[(l.meta.tat, v.as_str())]);
        }
        let deadline = ctx.int(now + lease);
        let mut zadd: Vec<Str> = vec![active.name()];
        for p in &picks {
            zadd.push(deadline.as_str());
            zadd.push(p.id.as_str());
        }
        ctx.replicate(c"ZADD", &zadd);
        for (j, p) in picks.iter().enumerate() {
            let token = first + j as i64;
            active.zadd((now + lease) as f64, p.id.as_str());
            let row = ctx.open(p.row.as_str());
            let (attempts_s, token_s) = (ctx.int(p.attempts), ctx.int(token));
            row.hset(&[
                (l.row.state, l.state.active),
                (l.row.attempts, attempts_s.as_str()),
                (l.row.deadline_ms, deadline.as_str()),
                (l.row.token, token_s.as_str()),
            ]);
            let payload = row.hget(l.row.payload);
            let opts = row.hget(l.row.opts);
            drop(row);
            jobs.push(Claimed {
                id: ctx.string(p.id.bytes()),
                payload,
                attempts: p.attempts,
                token,
                opts,
            });
        }
    }
    let k = jobs.len() as i64;
    let spent = lim.rate.map(|(rate, _)| (rate, allowed - k <= 0));
    let spent_rate = spent.is_some_and(|(_, spent)| spent);
    let full = lim.conc.is_some_and(|conc| busy + k >= conc);
    let open = claimable && !spent_rate && !full;
    markers(s, &wake, now, open && ready::any(s, &meta));
    if moved > 0 {
        ctx.signal_ready(pending.name());
    }
    let heads = [schedule.first_score(), active.first_score()]
        .into_iter()
        .flatten()
        .map(|s| s as i64);
    let park = lim.parked.filter(|_| parked);
    let token = spent
        .filter(|&(_, spent)| spent)
        .map(|(rate, _)| rate.next_token(tat));
    let next_ms = heads.chain(park).chain(token).min().unwrap_or(0);
    if jobs.is_empty() && block > 0 && s.may_block() {
        let until = if next_ms > 0 {
            (next_ms - now).clamp(1, block)
        } else {
            block
        };
        return Ok(Reply::Wait {
            key: s.name(PENDING),
            timeout_ms: until,
            next_ms,
        });
    }
    Ok(Reply::Claimed { next_ms, jobs })
}

/// One candidate of the walk: picked when its row exists (its attempts a counter), else popped and
/// dropped.
fn pick<'a>(
    s: &Scope<'a>,
    picks: &mut Vec<Pick<'a>>,
    id: Owned<'a>,
    row: Owned<'a>,
    exists: bool,
) -> Result<(), Refusal> {
    if exists {
        let attempts = counter(&s.ctx.open(row.as_str()), lit().row.attempts)? + 1;
        picks.push(Pick { id, row, attempts });
    }
    Ok(())
}

/// Walks level `p` (its ready list `list`) until `room` jobs are picked: its expired ids (the last
/// RPUSHed first), its list from the tail, its due ids in LPUSH order. Returns how many it pops.
fn walk<'a>(
    s: &mut Scope<'a>,
    picks: &mut Vec<Pick<'a>>,
    room: usize,
    (expired, due): (&Due<'a>, &Due<'a>),
    p: u64,
    list: &Key,
) -> Result<usize, Refusal> {
    let ctx = s.ctx;
    let at = |d: &Due| -> Vec<usize> { (0..d.len()).filter(|&k| d.plan.places[k].1 == p).collect() };
    let (exp, du) = (at(expired), at(due));
    let len = if list.kind() == Kind::List {
        list.value_len()
    } else {
        0
    };
    let total = exp.len() + len + du.len();
    let copy = |d: &Due<'a>, k: usize| {
        (
            ctx.string(d.ids[k].bytes()),
            ctx.string(d.rows[k].bytes()),
            d.exists[k],
        )
    };
    let mut i = 0;
    while picks.len() < room && i < total {
        i += 1;
        let (id, row, exists) = if i <= exp.len() {
            copy(expired, exp[exp.len() - i])
        } else if i > exp.len() + len {
            copy(due, du[i - exp.len() - len - 1])
        } else {
            let id = list
                .index(-((i - exp.len()) as i64))
                .map(|id| ctx.string(id.bytes()))
                .unwrap_or_else(|| ctx.string(b""));
            let row = s.row_of(id.bytes());
            let exists = s.expect(row.as_str(), Kind::Hash)?.kind() == Kind::Hash;
            (id, row, exists)
        };
        pick(s, picks, id, row, exists)?;
    }
    Ok(i)
}

/// wake after a claim: `ready` while the queue holds ready jobs a claim could take now (`left`: not
/// paused, parked or at a limit), else none; a `due` marker whose time has come is spent.
/// Replicated.
fn markers(s: &Scope, wake: &Key, now: i64, left: bool) {
    let wake_name = wake.name();
    let l = lit();
    let ctx = s.ctx;
    let ready = wake.zscore(l.wake.ready);
    if left && ready != Some(0.0) {
        wake.zadd(0.0, l.wake.ready);
        ctx.replicate(c"ZADD", &[wake_name, l.zero, l.wake.ready]);
    } else if !left && ready.is_some() {
        wake.zrem(l.wake.ready);
        ctx.replicate(c"ZREM", &[wake_name, l.wake.ready]);
    }
    if wake.zscore(l.wake.due).is_some_and(|at| at as i64 <= now) {
        wake.zrem(l.wake.due);
        ctx.replicate(c"ZREM", &[wake_name, l.wake.due]);
    }
}
