//! `EMQ.CLAIM 1 <meta> <lease_ms> <count> <block_ms>` (the twin of `lib/lua/claim.ts`). First the
//! queue's upkeep: due scheduled ids move to the head of their ready lists and expired leases to
//! the tail (at most `CLAIM_MOVE_LIMIT` each). Then, unless the queue is paused or parked, up to
//! count ids (fewer under its concurrency or rate limit) are popped from the tails into active at
//! now + lease_ms, each with attempts + 1 and a fresh token from `meta`'s `tokens` (raised to now
//! × `TOKENS_PER_MS` first when below it); ids whose row is missing are popped and dropped. A queue
//! that is not laned takes them priority by priority; a laned one serves the lanes of its ring
//! round-robin, after its parked lanes whose time has come are let back (`walk`, docs/design/
//! lanes.md §10.6). Everything is decided first, on the state as the moves will leave it, and
//! written after. With nothing claimed, block_ms > 0 and a caller that may wait, the client waits
//! on pending (at most until the next due time); a signal runs the claim again. Deduplication
//! windows that ended are dropped (`dedup::expired`); the dead and the completed sets are trimmed to
//! the queue's retention. Its events, in this order: `promoted` (the due ids moved), `stalled`
//! (the expired leases moved), `claimed` (the ids and their attempts). Reply `[next_ms, [id,
//! payload, attempts, token, opts]…]`.

use super::dedup;
use super::events::{blank, Events, Fields};
use super::lanes::{self, Live};
use super::limits::{self, Tat};
use super::move_due::{apply, select, Due};
use super::ready;
use super::retention::{self, Kept};
use super::scope::Scope;
use super::walk::{self, pick, Jobs, Moved, Pick, Pop, RingOp};
use super::{counter, paused};
use crate::command::{Args, Claimed, Reply};
use crate::ffi::{Key, Kind, Str};
use crate::keyspace::{ACTIVE, COMPLETED, DEAD, PENDING, SCHEDULE, WAKE};
use crate::literals::lit;
use crate::spec::{CLAIM_MOVE_LIMIT, TOKENS_PER_MS};
use crate::wire::Refusal;

/// Runs CLAIM's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (lease, count, block) = (args.number(0), args.number(1) as usize, args.number(2));
    let (ctx, l) = (s.ctx, lit());
    let meta = s.meta()?;
    let pending = s.structure(PENDING, Kind::List)?;
    let active = s.structure(ACTIVE, Kind::Zset)?;
    let schedule = s.structure(SCHEDULE, Kind::Zset)?;
    let dead = s.structure(DEAD, Kind::Zset)?;
    let completed = s.structure(COMPLETED, Kind::Zset)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    let events = Events::open(s, &meta)?;
    let now = s.now();
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

    // The walk, writing nothing. A queue that is not laned takes its jobs as one lane's, level by
    // level: priority 0 (pending) first, then every priority of `levels:` and of the ids this call
    // makes ready, lowest first. A laned queue serves the ring's lanes round-robin (`walk`).
    let claimable = !paused && !parked;
    let m = Moved {
        expired: &expired,
        due: &due,
    };
    let mut picks: Vec<Pick> = Vec::new();
    let (mut laned, mut pops) = if lanes::laned(&meta).is_some() {
        let room = if claimable { room } else { 0 };
        let mut laned = walk::simulate(s, &meta, m, now, room, &mut picks)?;
        let pops = laned.pops();
        (Some(laned), pops)
    } else if claimable && room > 0 {
        let mut jobs = Jobs::new(s, b"", m)?;
        while picks.len() < room {
            let Some(job) = jobs.next(s, m)? else {
                break;
            };
            pick(&mut picks, job, 0)?;
        }
        let pops = jobs.into_pops(0).collect();
        (None, pops)
    } else {
        (None, Vec::new())
    };
    let prioritized = if pops
        .iter()
        .any(|p| p.list.name().bytes() != pending.name().bytes())
    {
        counter(&meta, l.meta.prioritized)?
    } else {
        0
    };
    let (tokens, claimed) = if picks.is_empty() {
        (0, 0)
    } else {
        (
            counter(&meta, l.meta.tokens)?,
            counter(&meta, l.meta.claimed)?,
        )
    };
    let victims = retention::select(s, &meta, &dead, Kept::Dead, now, 0)?;
    // ended deduplication windows: only on a queue that ever took a key (meta's dedup)
    let deduplicates =
        meta.kind() == Kind::Hash && meta.hget(l.meta.dedup).is_some_and(|v| v.bytes() == b"1");
    let windows = if deduplicates {
        dedup::expired(s, now)?
    } else {
        None
    };
    let finished = retention::select(s, &meta, &completed, Kept::Completed, now, 0)?;
    s.probe()?;

    // Writes. Step 5's handles serve step 6 only while no other handle can have made, deleted or
    // changed their keys first: no ids moved (no lane's `active` lowered, nothing pushed), no row
    // deleted by retention. Else they are closed now, and each use opens its key anew
    // (`Key::again`); pending's pops go through `pending`.
    let keep = due.is_empty() && expired.is_empty() && victims.is_empty() && finished.is_empty();
    for p in &mut picks {
        if !keep {
            p.row.close();
        }
    }
    for p in &mut pops {
        if !keep || p.list.name().bytes() == pending.name().bytes() {
            p.list.close();
        }
    }
    if let Some(laned) = &mut laned {
        laned.keep(keep);
        lanes::lower(s, &meta, &laned.counted);
    }
    let moved = apply(s, &meta, &schedule, &pending, false, &due)
        + apply(s, &meta, &active, &pending, true, &expired);
    let live = laned
        .as_mut()
        .map(|laned| Live::with_keys(s, laned.defaults, laned.keys.take()));
    if let (Some(laned), Some(live)) = (&laned, &live) {
        for lane in &laned.unparked {
            live.unpark(lane.as_str());
        }
        // consecutive rotations go out as their net effect, each run before the eviction after it
        let mut turns = 0;
        for op in &laned.ops {
            match *op {
                RingOp::Rotate => turns += 1,
                RingOp::Evict(i, park) => {
                    live.rotate(std::mem::take(&mut turns));
                    live.evict(laned.lanes[i].name.as_str(), park);
                }
            }
        }
        live.rotate(turns);
    }
    let gone = popped(s, &pending, &pops);
    if let (Some(laned), Some(live)) = (&laned, &live) {
        for (i, lane) in laned.lanes.iter().enumerate() {
            if pops.iter().any(|p| p.lane == i) {
                let k: usize = pops.iter().filter(|p| p.lane == i).map(|p| p.k).sum();
                live.add_ready(lane.name.as_str(), -(k as i64));
            }
        }
        for lane in laned.lanes.iter().filter(|l| l.picked > 0) {
            let rate = lane.state.rate_in_force(&laned.defaults);
            let tat = rate.and(lane.state.tat);
            live.took(&lane.key.again(), lane.state.active, tat);
        }
    }
    retention::apply(s, &dead, &victims);
    if let Some((d, keys)) = &windows {
        dedup::drop_expired(ctx, d, keys);
    }
    retention::apply(s, &completed, &finished);
    // meta's counters and rate state, in one HSET: `prioritized` lowered by the pops not of
    // pending, then, when jobs are claimed, `tokens` (above now × TOKENS_PER_MS: a queue made
    // again never repeats a token of an earlier life), `claimed` and the queue rate's `tat`
    let k = picks.len() as i64;
    let floor = tokens.max(now * TOKENS_PER_MS);
    let first = floor + 1;
    // the moves (`apply`) may have raised `prioritized` since step 5 read it
    let prioritized = if moved > 0 && gone > 0 {
        counter(&meta, l.meta.prioritized).unwrap_or(0)
    } else {
        prioritized
    };
    let left = (gone > 0).then(|| ctx.int(prioritized - gone));
    let counters = (k > 0).then(|| (ctx.int(floor + k), ctx.int(claimed + k)));
    let rated = lim.rate.filter(|_| k > 0).map(|(rate, _)| {
        tat = rate.take(tat, k);
        ctx.pair(tat.q.into(), b' ', tat.r.into())
    });
    let mut fields: Vec<(Str, Str)> = Vec::with_capacity(4);
    if let Some(v) = &left {
        fields.push((l.meta.prioritized, v.as_str()));
    }
    if let Some((t, c)) = &counters {
        fields.extend([(l.meta.tokens, t.as_str()), (l.meta.claimed, c.as_str())]);
    }
    if let Some(v) = &rated {
        fields.push((l.meta.tat, v.as_str()));
    }
    if !fields.is_empty() {
        meta.hset(&fields);
    }
    let mut jobs = Vec::with_capacity(picks.len());
    if !picks.is_empty() {
        let deadline = ctx.int(now + lease);
        let mut zadd: Vec<Str> = vec![active.name()];
        for p in &picks {
            zadd.push(deadline.as_str());
            zadd.push(p.id.as_str());
        }
        ctx.replicate(c"ZADD", &zadd);
        // A new `active` is made a skiplist, not a listpack: a listpack's adds and lookups scan
        // every member (a busy worker's ~100: 16,600 instructions per add, a quarter of a drain's
        // server time; bench/RESULTS.md section 15), a skiplist's are O(log n). A member longer
        // than a listpack takes goes in first and out after the ids; the set stays a skiplist
        // until it empties (or is loaded from an RDB). Speed only: the keyspace is the same, and
        // neither member add is replicated (the ZADD above is).
        let fresh = active.kind() != Kind::Zset;
        if fresh {
            active.zadd(0.0, l.skiplist);
        }
        for (j, p) in picks.iter().enumerate() {
            let token = first + j as i64;
            active.zadd((now + lease) as f64, p.id.as_str());
            let row = p.row.again();
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
        if fresh {
            active.zrem(l.skiplist);
        }
    }
    if let (Some(laned), Some(live)) = (&laned, &live) {
        for lane in laned.lanes.iter().filter(|l| l.evicted) {
            live.idle(lane.name.as_str());
        }
    }
    let k = jobs.len() as i64;
    announce(&events, &due, &expired, &jobs);
    let spent = lim.rate.map(|(rate, _)| (rate, allowed - k <= 0));
    let spent_rate = spent.is_some_and(|(_, spent)| spent);
    let full = lim.conc.is_some_and(|conc| busy + k >= conc);
    let open = claimable && !spent_rate && !full;
    let left = match &live {
        Some(live) => live.serving(),
        None => ready::any(s, &meta),
    };
    markers(s, &wake, now, open && left);
    if moved > 0 {
        ctx.signal_ready(pending.name());
    }
    let lanes_parked = laned.as_ref().and_then(|laned| laned.parked_head(s));
    let heads = [schedule.first_score(), active.first_score(), lanes_parked]
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

/// The claim's events, in its steps' order: `promoted` (the due ids moved), `stalled` (the expired
/// leases moved), `claimed` (the ids with their attempts); none for an empty list.
fn announce(events: &Events, due: &Due, expired: &Due, jobs: &[Claimed]) {
    if !events.on() {
        return;
    }
    let l = lit();
    events.jobs(l.event.promoted, due.ids.iter().map(|id| id.bytes()));
    events.jobs(l.event.stalled, expired.ids.iter().map(|id| id.bytes()));
    let ids = events.list(jobs.iter().map(|j| j.id.bytes()));
    let attempts: Vec<String> = jobs.iter().map(|j| j.attempts.to_string()).collect();
    let attempts = events.list(attempts.iter().map(|a| a.as_bytes()));
    if let (Some(ids), Some(attempts)) = (ids, attempts) {
        let entry = Fields {
            jobs: Some(ids.as_str()),
            attempts: Some(attempts.as_str()),
            ..blank()
        };
        events.add(l.event.claimed, &entry);
    }
}

/// Step 6 of the walk's pops: `RPOP list k` of each list, each lane's `levels:` without a priority
/// whose list is now empty; replicated. Returns how many were popped from lists not `pending` (the
/// caller lowers `prioritized` by as many).
fn popped(s: &Scope, pending: &Key, pops: &[Pop]) -> i64 {
    let ctx = s.ctx;
    let mut gone = 0;
    for p in pops {
        let of_pending = p.list.name().bytes() == pending.name().bytes();
        let opened;
        let list = if of_pending {
            pending
        } else {
            opened = p.list.again();
            &opened
        };
        for _ in 0..p.k {
            list.pop_tail();
        }
        let n = ctx.int(p.k as i64);
        ctx.replicate(c"RPOP", &[p.list.name(), n.as_str()]);
        if !of_pending {
            gone += p.k as i64;
        }
    }
    for p in pops.iter().filter(|p| p.p > 0) {
        let list = p.list.again();
        if list.kind() == Kind::List && list.value_len() > 0 {
            continue;
        }
        drop(list);
        let levels = ctx.open_named(s.levels(p.name.bytes()));
        let member = ctx.int(p.p as i64);
        if levels.zrem(member.as_str()) {
            ctx.replicate(c"ZREM", &[levels.name(), member.as_str()]);
        }
    }
    gone
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
