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

use super::dedup::{self, Dedup};
use super::events::{blank, Events, Fields};
use super::lanes::{self, Live};
use super::limits::{self, Limits, Tat};
use super::move_due::{apply, select, Due};
use super::ready;
use super::retention::{self, Kept, Victims};
use super::scope::Scope;
use super::walk::{self, pick, Jobs, Laned, Moved, Pick, Pop, RingOp};
use super::{counter, paused};
use crate::command::{Args, Claimed, Reply};
use crate::ffi::{Key, Kind, Owned, Str};
use crate::keyspace::{ACTIVE, COMPLETED, DEAD, PENDING, SCHEDULE, WAKE};
use crate::literals::{lit, Literals};
use crate::spec::{CLAIM_MOVE_LIMIT, TOKENS_PER_MS};
use crate::wire::Refusal;

/// Runs CLAIM's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    // the literals, made once for both steps (each `lit()` copies them all)
    let l = lit();
    let checked = check(s, args, &l)?;
    Ok(write(s, args, checked, &l))
}

/// The literals as [`lit`] hands them out.
type Lit = Literals<Str<'static>>;

/// CLAIM's step 5 done: what it read and decided, and the handles its writes use.
struct Checked<'a> {
    keys: Keys<'a>,
    events: Events<'a>,
    now: i64,
    /// The due scheduled ids, moved to the head of their ready lists.
    due: Due<'a>,
    /// The expired leases, moved to the tail of theirs.
    expired: Due<'a>,
    room: Room,
    walked: Walked<'a>,
    counters: Counters,
    upkeep: Upkeep<'a>,
}

/// The queue's structures CLAIM reads and writes, typed (`meta` first).
struct Keys<'a> {
    meta: Key<'a, 'a>,
    pending: Key<'a, 'a>,
    active: Key<'a, 'a>,
    schedule: Key<'a, 'a>,
    dead: Key<'a, 'a>,
    completed: Key<'a, 'a>,
    wake: Key<'a, 'a>,
}

/// The queue's limits at now, and the jobs they leave room for: paused or parked, none; else at
/// most the concurrency limit's free slots (the expired leases leave active first) and the rate
/// limit's tokens.
struct Room {
    lim: Limits,
    /// Parked by the rate limit until later than now.
    parked: bool,
    /// Neither paused nor parked.
    claimable: bool,
    /// How many jobs the claim may take (`count` at most).
    n: usize,
    /// The active jobs that hold a slot (0 without a concurrency limit).
    busy: i64,
    /// The rate limit's tokens (0 without one), and its state.
    allowed: i64,
    tat: Tat,
}

/// The walk decided: the jobs it claims, the lists it pops them from, and in a laned queue what
/// step 6 replays on the lanes.
struct Walked<'a> {
    picks: Vec<Pick<'a>>,
    pops: Vec<Pop<'a>>,
    laned: Option<Laned<'a>>,
}

/// `meta`'s counters the writes raise or lower, as step 5 read them (0 when unused).
struct Counters {
    prioritized: i64,
    tokens: i64,
    claimed: i64,
}

/// The upkeep: the dead and completed jobs past the queue's retention, the deduplication windows
/// that ended.
struct Upkeep<'a> {
    victims: Victims<'a>,
    windows: Option<(Dedup<'a>, Vec<Owned<'a>>)>,
    finished: Victims<'a>,
}

/// CLAIM's step 5: every check, nothing written. (`inline(always)` here and on its parts: what they
/// return is then made in `run`'s frame, not copied there, a `memcpy` call per struct.)
#[inline(always)]
fn check<'a>(s: &mut Scope<'a>, args: &Args<'a>, l: &Lit) -> Result<Checked<'a>, Refusal> {
    let keys = Keys::open(s)?;
    let events = Events::open(s, &keys.meta)?;
    let now = s.now();
    let due = select(s, &keys.meta, &keys.schedule, now, CLAIM_MOVE_LIMIT)?;
    let expired = select(s, &keys.meta, &keys.active, now, CLAIM_MOVE_LIMIT)?;
    let room = Room::read(&keys, &expired, args.number(1) as usize, now);
    let m = Moved {
        expired: &expired,
        due: &due,
    };
    let mut walked = walked(s, &keys.meta, m, now, &room)?;
    let counters = Counters::read(&keys, &walked, l)?;
    let upkeep = Upkeep::read(s, &keys, now, l)?;
    s.probe()?;
    // Step 6 writes through step 5's handles only while no other handle can have made, deleted or
    // changed their keys first: with ids moved (a lane's `active` lowered, ids pushed) or rows
    // deleted by retention, they are released, and each use opens its key anew.
    let moves = !(due.is_empty() && expired.is_empty());
    if moves || upkeep.deletes() {
        walked.release();
    }
    Ok(Checked {
        keys,
        events,
        now,
        due,
        expired,
        room,
        walked,
        counters,
        upkeep,
    })
}

impl<'a> Keys<'a> {
    /// Step 5: `meta` and the structures, each missing or of its type.
    #[inline(always)]
    fn open(s: &mut Scope<'a>) -> Result<Keys<'a>, Refusal> {
        Ok(Keys {
            meta: s.meta()?,
            pending: s.structure(PENDING, Kind::List)?,
            active: s.structure(ACTIVE, Kind::Zset)?,
            schedule: s.structure(SCHEDULE, Kind::Zset)?,
            dead: s.structure(DEAD, Kind::Zset)?,
            completed: s.structure(COMPLETED, Kind::Zset)?,
            wake: s.structure(WAKE, Kind::Zset)?,
        })
    }
}

impl Room {
    /// The room for up to `count` jobs at `now`, the `expired` leases let go.
    #[inline(always)]
    fn read(keys: &Keys, expired: &Due, count: usize, now: i64) -> Room {
        let paused = paused(&keys.meta);
        let lim = limits::read(&keys.meta);
        let parked = lim.parked.is_some_and(|p| p > now);
        let (mut n, mut busy, mut allowed, mut tat) = (count, 0, 0, Tat::default());
        if let Some(conc) = lim.conc {
            let active = &keys.active;
            let card = if active.kind() == Kind::Zset {
                active.value_len()
            } else {
                0
            };
            busy = card as i64 - expired.len() as i64;
            n = n.min((conc - busy).max(0) as usize);
        }
        if let Some((rate, stored)) = lim.rate {
            (allowed, tat) = rate.tokens(stored, now);
            n = n.min(allowed as usize);
        }
        Room {
            lim,
            parked,
            claimable: !paused && !parked,
            n,
            busy,
            allowed,
            tat,
        }
    }

    /// Whether a claim could take a job after this one took `k`: not paused or parked, and at
    /// neither limit.
    fn open(&self, k: i64) -> bool {
        let spent = self.lim.rate.is_some() && self.allowed - k <= 0;
        let full = self.lim.conc.is_some_and(|conc| self.busy + k >= conc);
        self.claimable && !spent && !full
    }

    /// When the limits let a claim take a job again, after this one took `k`: the end of its
    /// park, the rate limit's next token once its tokens are spent.
    fn next_ms(&self, k: i64) -> Option<i64> {
        let park = self.lim.parked.filter(|_| self.parked);
        let token = self
            .lim
            .rate
            .filter(|_| self.allowed - k <= 0)
            .map(|(rate, _)| rate.next_token(self.tat));
        park.into_iter().chain(token).min()
    }
}

/// The walk, writing nothing. A queue that is not laned takes its jobs as one lane's, level by
/// level: priority 0 (pending) first, then every priority of `levels:` and of the ids this call
/// makes ready, lowest first. A laned queue serves the ring's lanes round-robin (`walk`).
#[inline(always)]
fn walked<'a>(
    s: &mut Scope<'a>,
    meta: &Key,
    m: Moved<'_, 'a>,
    now: i64,
    room: &Room,
) -> Result<Walked<'a>, Refusal> {
    let n = if room.claimable { room.n } else { 0 };
    let mut picks: Vec<Pick> = Vec::new();
    if lanes::laned(meta).is_some() {
        let mut laned = walk::simulate(s, meta, m, now, n, &mut picks)?;
        let pops = laned.pops();
        return Ok(Walked {
            picks,
            pops,
            laned: Some(laned),
        });
    }
    let mut pops = Vec::new();
    if n > 0 {
        let mut jobs = Jobs::new(s, b"", m)?;
        while picks.len() < n {
            let Some(job) = jobs.next(s, m)? else {
                break;
            };
            pick(&mut picks, job, 0)?;
        }
        pops = jobs.into_pops(0).collect();
    }
    Ok(Walked {
        picks,
        pops,
        laned: None,
    })
}

impl Walked<'_> {
    /// Releases every handle step 5 kept for step 6 (`walk::Held`).
    fn release(&mut self) {
        for p in &mut self.picks {
            p.row.release();
        }
        for p in &mut self.pops {
            p.list.release();
        }
        if let Some(laned) = &mut self.laned {
            laned.release();
        }
    }
}

impl Counters {
    /// Step 5, each a counter read only when step 6 writes it: `prioritized` when the walk pops a
    /// list not pending's, `tokens` and `claimed` when it picks a job.
    fn read(keys: &Keys, walked: &Walked, l: &Lit) -> Result<Counters, Refusal> {
        let meta = &keys.meta;
        let read = |on: bool, field| if on { counter(meta, field) } else { Ok(0) };
        let pending = keys.pending.name();
        let others = walked
            .pops
            .iter()
            .any(|p| p.list.name().bytes() != pending.bytes());
        let picks = !walked.picks.is_empty();
        Ok(Counters {
            prioritized: read(others, l.meta.prioritized)?,
            tokens: read(picks, l.meta.tokens)?,
            claimed: read(picks, l.meta.claimed)?,
        })
    }

    /// `prioritized` lowered by the `gone` pops not of pending, if any; read again when the moves
    /// (`apply`) may have raised it since step 5 read it.
    fn left(&self, meta: &Key, moved: bool, gone: i64, l: &Lit) -> Option<i64> {
        if gone == 0 {
            return None;
        }
        let stored = if moved {
            counter(meta, l.meta.prioritized).unwrap_or(0)
        } else {
            self.prioritized
        };
        Some(stored - gone)
    }
}

impl<'a> Upkeep<'a> {
    /// Step 5 of the upkeep. Ended deduplication windows are looked for only on a queue that ever
    /// took a key (meta's `dedup`).
    #[inline(always)]
    fn read(s: &mut Scope<'a>, keys: &Keys<'a>, now: i64, l: &Lit) -> Result<Upkeep<'a>, Refusal> {
        let meta = &keys.meta;
        let victims = retention::select(s, meta, &keys.dead, Kept::Dead, now, 0)?;
        let deduplicates =
            meta.kind() == Kind::Hash && meta.hget(l.meta.dedup).is_some_and(|v| v.bytes() == b"1");
        let windows = if deduplicates {
            dedup::expired(s, now)?
        } else {
            None
        };
        let finished = retention::select(s, meta, &keys.completed, Kept::Completed, now, 0)?;
        Ok(Upkeep {
            victims,
            windows,
            finished,
        })
    }

    /// Whether it deletes rows.
    fn deletes(&self) -> bool {
        !(self.victims.is_empty() && self.finished.is_empty())
    }

    /// Its writes: the dead trimmed, the windows dropped, the completed trimmed.
    fn write(&self, s: &Scope, keys: &Keys) {
        retention::apply(s, &keys.dead, &self.victims);
        if let Some((d, names)) = &self.windows {
            dedup::drop_expired(s.ctx, d, names);
        }
        retention::apply(s, &keys.completed, &self.finished);
    }
}

/// CLAIM's step 6, after [`check`]: every write, and the reply.
#[inline(always)]
fn write<'a>(s: &Scope<'a>, args: &Args<'a>, mut c: Checked<'a>, l: &Lit) -> Reply<'a> {
    // (`c`'s parts are used in place: moved out of it, they would be copied)
    let (keys, now) = (&c.keys, c.now);
    let (picks, pops) = (&c.walked.picks, &c.walked.pops);
    if let Some(laned) = &c.walked.laned {
        lanes::lower(s, &keys.meta, &laned.counted);
    }
    let moved = apply(s, &keys.meta, &keys.schedule, &keys.pending, false, &c.due)
        + apply(s, &keys.meta, &keys.active, &keys.pending, true, &c.expired);
    // the lanes' writes go through the `ring` and `lanes` step 5 kept, if it did
    let live = (c.walked.laned.as_mut())
        .map(|laned| Live::with_keys(s, laned.defaults, laned.keys.take()));
    let lanes = c.walked.laned.as_ref().zip(live.as_ref());
    if let Some((laned, live)) = lanes {
        ring(laned, live);
    }
    let gone = popped(s, &keys.pending, pops);
    if let Some((laned, live)) = lanes {
        took(laned, live, pops);
    }
    c.upkeep.write(s, keys);
    let left = c.counters.left(&keys.meta, moved > 0, gone, l);
    let k = picks.len() as i64;
    let first = count(&keys.meta, left, &c.counters, &mut c.room, now, k, l);
    let jobs = activate(&keys.active, picks, now, args.number(0), first, l);
    if let Some((laned, live)) = lanes {
        // a lane let out of `parked` with nothing left in it goes too (idle, as after an eviction)
        for lane in laned.lanes.iter().filter(|l| l.evicted || l.unparked) {
            live.idle(lane.name.as_str());
        }
    }
    announce(&c.events, &c.due, &c.expired, &jobs);
    let ready = match &live {
        Some(live) => live.serving(),
        None => ready::any(s, &keys.meta),
    };
    markers(s, &keys.wake, now, c.room.open(k) && ready);
    if moved > 0 {
        s.ctx.signal_ready(keys.pending.name());
    }
    let next_ms = next_ms(s, keys, c.walked.laned.as_ref(), &c.room, k);
    reply(s, jobs, next_ms, now, args.number(2))
}

/// When a claim may find a job again (0: nothing known), after this one took `k`: the first due
/// scheduled id, lease or parked lane, the end of the queue's park, or its rate's next token.
fn next_ms(s: &Scope, keys: &Keys, laned: Option<&Laned>, room: &Room, k: i64) -> i64 {
    let lanes_parked = laned.and_then(|laned| laned.parked_head(s));
    let heads = [
        keys.schedule.first_score(),
        keys.active.first_score(),
        lanes_parked,
    ];
    let heads = heads.into_iter().flatten().map(|s| s as i64);
    heads.chain(room.next_ms(k)).min().unwrap_or(0)
}

/// The reply: the `jobs` claimed and `next_ms`; with none, `block` > 0 and a caller that may
/// wait, a wait on pending instead, at most until `next_ms`.
fn reply<'a>(
    s: &Scope<'a>,
    jobs: Vec<Claimed<'a>>,
    next_ms: i64,
    now: i64,
    block: i64,
) -> Reply<'a> {
    if jobs.is_empty() && block > 0 && s.may_block() {
        let until = if next_ms > 0 {
            (next_ms - now).clamp(1, block)
        } else {
            block
        };
        return Reply::Wait {
            key: s.name(PENDING),
            timeout_ms: until,
            next_ms,
        };
    }
    Reply::Claimed { next_ms, jobs }
}

/// The ring as the walk leaves it: the parked lanes whose time has come let back, then its
/// rotations and evictions, consecutive rotations as their net effect, each run before the
/// eviction after it.
fn ring(laned: &Laned, live: &Live) {
    for lane in &laned.unparked {
        live.unpark(lane.as_str());
    }
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

/// The lanes after the pops: each one's ready count lowered by its pops, then each one picked
/// from written (its `active` and rate state).
fn took(laned: &Laned, live: &Live, pops: &[Pop]) {
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

/// meta's counters and rate state, in one HSET: `prioritized` made `left` (lowered by the pops
/// not of pending), then, when `k` jobs are claimed, `tokens` (above now × TOKENS_PER_MS: a queue
/// made again never repeats a token of an earlier life), `claimed` and the queue rate's `tat`
/// (taken in `room`). Returns the first token of the claim.
fn count(
    meta: &Key,
    left: Option<i64>,
    read: &Counters,
    room: &mut Room,
    now: i64,
    k: i64,
    l: &Lit,
) -> i64 {
    let ctx = meta.ctx();
    let left = left.map(|v| ctx.int(v));
    let floor = read.tokens.max(now * TOKENS_PER_MS);
    let counters = (k > 0).then(|| (ctx.int(floor + k), ctx.int(read.claimed + k)));
    let rated = room.lim.rate.filter(|_| k > 0).map(|(rate, _)| {
        room.tat = rate.take(room.tat, k);
        ctx.pair(room.tat.q.into(), b' ', room.tat.r.into())
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
    floor + 1
}

/// The picks made active until now + `lease`: `ZADD active`, each row's state, attempts, deadline
/// and a fresh token (from `first` on); replicated. Returns the jobs claimed, with their payloads
/// and options.
fn activate<'a>(
    active: &Key<'a, 'a>,
    picks: &[Pick<'a>],
    now: i64,
    lease: i64,
    first: i64,
    l: &Lit,
) -> Vec<Claimed<'a>> {
    let mut jobs = Vec::with_capacity(picks.len());
    if picks.is_empty() {
        return jobs;
    }
    let ctx = active.ctx();
    let deadline = ctx.int(now + lease);
    let mut zadd: Vec<Str> = vec![active.name()];
    for p in picks {
        zadd.push(deadline.as_str());
        zadd.push(p.id.as_str());
    }
    ctx.replicate(c"ZADD", &zadd);
    // A new `active` is made a skiplist, not a listpack: a listpack's adds and lookups scan every
    // member (a busy worker's ~100: 16,600 instructions per add, a quarter of a drain's server
    // time; bench/RESULTS.md section 15), a skiplist's are O(log n). A member longer than a
    // listpack takes goes in first and out after the ids; the set stays a skiplist until it
    // empties (or is loaded from an RDB). Speed only: the keyspace is the same, and neither member
    // add is replicated (the ZADD above is).
    let fresh = active.kind() != Kind::Zset;
    if fresh {
        active.zadd(0.0, l.skiplist);
    }
    for (j, p) in picks.iter().enumerate() {
        active.zadd((now + lease) as f64, p.id.as_str());
        let row = p.row.again();
        let token = first + j as i64;
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
    jobs
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
