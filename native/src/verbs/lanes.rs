//! Lanes (docs/design/lanes.md §10; the twin of `lib/lua/lanes.ts`): a queue is laned once an
//! admission carried a `lane` (`meta`'s `laned`); then `lanes` scores each lane's ready jobs,
//! `lane:<L>` holds its state, and `ring` the lanes claims serve round-robin. Every lane write ends
//! with the two checks of §10.3: [`Live::insert`] (into the ring when it may be served) and
//! [`Live::idle`] (the state deleted once it holds nothing). The state's tests ([`State`]) are pure
//! and shared by those checks and by CLAIM's simulation; step 5 types every lane key a verb writes
//! ([`check`]); [`Live`] writes them in step 6, replicated.

use super::limits::{self, Rate, Tat};
use super::ready::lane_in;
use super::scope::Scope;
use super::{add, counter};
use crate::ffi::{Key, Kind, Owned, Str};
use crate::gates;
use crate::keyspace::{LANES, PARKED, PENDING, RING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// `meta`'s `laned` (the tokens when the queue became laned); `None` while the queue is not laned.
pub fn laned(meta: &Key) -> Option<i64> {
    if meta.kind() != Kind::Hash {
        return None;
    }
    let v = meta.hget(lit().meta.laned)?;
    gates::counter(v.bytes())
}

/// The limits of every lane without its own (`meta`'s `lane_concurrency`, `lane_rate`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Defaults {
    /// The concurrency limit.
    pub conc: Option<i64>,
    /// The rate limit.
    pub rate: Option<Rate>,
}

impl Defaults {
    /// The defaults `meta` holds (none when it is missing).
    pub fn read(meta: &Key) -> Defaults {
        if meta.kind() != Kind::Hash {
            return Defaults::default();
        }
        let l = lit();
        let (c, r) = (
            meta.hget(l.meta.lane_concurrency),
            meta.hget(l.meta.lane_rate),
        );
        Defaults {
            conc: limits::parse_conc(c.as_ref().map(|v| v.bytes())),
            rate: limits::parse_rate(r.as_ref().map(|v| v.bytes())),
        }
    }
}

/// Why the walk cannot serve a lane now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It can: a job, no pause or park, room under its concurrency, a token of its rate.
    Eligible,
    /// It cannot (no job, paused, parked, at its concurrency): evicted from the ring.
    Evict,
    /// Only its rate stops it: evicted and parked until its next token.
    Park(i64),
}

/// A lane's state hash, as the checks and the walk read it (a value not as the verbs write it
/// counts as absent).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct State {
    /// In the ring (`ring` = 1).
    pub ring: bool,
    /// Its counted held jobs.
    pub active: i64,
    /// Paused (`paused` = 1).
    pub paused: bool,
    /// Its own concurrency limit.
    pub conc: Option<i64>,
    /// Its own rate limit.
    pub rate: Option<Rate>,
    /// Its rate state `(q, r)` as stored (checked against the rate in force when used).
    pub tat: Option<(i64, i64)>,
    /// Parked until.
    pub parked: Option<i64>,
    /// Whether the hash has any of `ring`, `paused`, `concurrency`, `rate`, `parked` (which keep it).
    pub kept: bool,
}

impl State {
    /// The state from the hash's fields, in `LANE` order: ring, active, paused, concurrency,
    /// rate, tat, parked.
    pub fn parse(f: [Option<&[u8]>; 7]) -> State {
        let [ring, active, paused, conc, rate, tat, parked] = f;
        let tat = tat.and_then(|t| {
            let (q, r) = t.split_at(t.iter().position(|&b| b == b' ')?);
            Some((
                limits::parse_time(Some(q))?,
                limits::parse_time(Some(&r[1..]))?,
            ))
        });
        State {
            ring: ring == Some(b"1"),
            active: active.and_then(gates::counter).unwrap_or(0),
            paused: paused == Some(b"1"),
            conc: limits::parse_conc(conc),
            rate: limits::parse_rate(rate),
            tat,
            parked: limits::parse_time(parked),
            kept: [ring, paused, conc, rate, parked]
                .iter()
                .any(Option::is_some),
        }
    }

    /// The state of the hash `key` (missing: the empty state).
    pub fn read(key: &Key) -> State {
        Self::fields(key).map_or_else(State::default, |v| {
            State::parse(v.each_ref().map(|o| o.as_ref().map(|s| s.bytes())))
        })
    }

    /// Step 5: the state of the hash `key` a verb will write, its `active` a counter (refused
    /// when not, as [`counter`]): the hash read once for both.
    pub fn read_counted(key: &Key) -> Result<State, Refusal> {
        let Some(v) = Self::fields(key) else {
            return Ok(State::default());
        };
        if let Some(active) = &v[1] {
            gates::bounded_counter(active.bytes()).ok_or(Refusal::Counter)?;
        }
        Ok(State::parse(
            v.each_ref().map(|o| o.as_ref().map(|s| s.bytes())),
        ))
    }

    /// The hash's fields in `LANE` order (none when it is not a hash).
    fn fields<'a>(key: &Key<'a, '_>) -> Option<[Option<Owned<'a>>; 7]> {
        if key.kind() != Kind::Hash {
            return None;
        }
        let n = lit().lane;
        Some(key.hget_each([
            n.ring,
            n.active,
            n.paused,
            n.concurrency,
            n.rate,
            n.tat,
            n.parked,
        ]))
    }

    /// The concurrency limit in force: its own, else the default.
    fn conc_in_force(&self, d: &Defaults) -> Option<i64> {
        self.conc.or(d.conc)
    }

    /// The rate limit in force and its state (absent, or not of that rate: a full bucket).
    pub fn rate_in_force(&self, d: &Defaults) -> Option<(Rate, Option<Tat>)> {
        let rate = self.rate.or(d.rate)?;
        let tat = self
            .tat
            .filter(|&(_, r)| r < rate.max)
            .map(|(q, r)| Tat { q, r });
        Some((rate, tat))
    }

    /// Whether a claim finds it open but for its jobs and rate: not paused, not parked, room
    /// under its concurrency.
    fn open(&self, now: i64, d: &Defaults) -> bool {
        !self.paused
            && self.parked.is_none_or(|p| p <= now)
            && self.conc_in_force(d).is_none_or(|c| self.active < c)
    }

    /// insert's test (§10.3): it has ready jobs, is not in the ring, and is open (its rate is not
    /// looked at: a claim that finds it without a token parks it).
    pub fn insertable(&self, ready: bool, now: i64, d: &Defaults) -> bool {
        ready && !self.ring && self.open(now, d)
    }

    /// idle's test (§10.3): no ready job, nothing that keeps the hash, no counted held job, and no
    /// rate state still ahead of now.
    pub fn idle(&self, ready: bool, now: i64) -> bool {
        !ready && !self.kept && self.active <= 0 && self.tat.is_none_or(|(q, _)| q <= now)
    }

    /// The walk's test (§10.6) for a lane that has a job (`has_job`) or not.
    pub fn verdict(&self, has_job: bool, now: i64, d: &Defaults) -> Verdict {
        if !has_job || !self.open(now, d) {
            return Verdict::Evict;
        }
        match self.rate_in_force(d) {
            None => Verdict::Eligible,
            Some((rate, tat)) => match rate.tokens(tat, now) {
                (0, base) => Verdict::Park(rate.next_token(base)),
                _ => Verdict::Eligible,
            },
        }
    }

    /// Whether its park is the one a claim writes when its rate stops it: the next token of its
    /// rate state under the rate in force (`d`: the defaults that rate may come from). LIMIT ends
    /// such a park with the state; any other (PENALIZE's) holds.
    pub fn rate_parked(&self, d: &Defaults) -> bool {
        match self.rate_in_force(d) {
            Some((rate, Some(tat))) => self.parked == Some(rate.next_token(tat)),
            _ => false,
        }
    }

    /// A job of the lane picked at `now`: one more held, one token of its rate taken.
    pub fn take(&mut self, now: i64, d: &Defaults) {
        self.active += 1;
        if let Some((rate, tat)) = self.rate_in_force(d) {
            let t = rate.take(rate.tokens(tat, now).1, 1);
            self.tat = Some((t.q, t.r));
        }
    }
}

/// Step 5 of a verb that writes the lanes `names` of a laned queue: the types of `ring`, `lanes`
/// and each lane's hash (missing ones remembered), and, when it changes `active`, that counter.
pub fn check<'n>(
    s: &mut Scope,
    names: impl IntoIterator<Item = &'n [u8]>,
    active: bool,
) -> Result<(), Refusal> {
    s.structure(RING, Kind::List)?;
    s.structure(LANES, Kind::Zset)?;
    // insert writes `ready` on wake (a handle opened and closed here, before any write)
    s.structure(WAKE, Kind::Zset)?;
    for lane in names {
        let name = s.lane(lane);
        let key = s.expect(name.as_str(), Kind::Hash)?;
        if active {
            counter(&key, lit().lane.active)?;
        }
    }
    Ok(())
}

/// The lanes whose `active` a settle or reap lowers (§10.5), each with how many, first seen first.
pub type Counted<'a> = Vec<(Owned<'a>, i64)>;

/// Step 5 of a settle or reap of the jobs whose rows are `rows` (those that exist): in a laned
/// queue, the lanes of the jobs counted in their lane's `active` (row `token` > `meta`'s `laned`),
/// with the lane keys and counters checked.
pub fn counted<'a>(
    s: &mut Scope<'a>,
    meta: &Key,
    rows: &[Owned],
    exists: &[bool],
) -> Result<Counted<'a>, Refusal> {
    // nothing to count (no existing row) reads nothing, not even `laned`
    if !exists.iter().any(|&e| e) {
        return Ok(Vec::new());
    }
    let Some(laned) = laned(meta) else {
        return Ok(Vec::new());
    };
    let (ctx, l) = (s.ctx, lit());
    let mut out: Counted = Vec::new();
    for (row, _) in rows.iter().zip(exists).filter(|(_, &e)| e) {
        let key = ctx.open(row.as_str());
        let token = key.hget(l.row.token);
        let token = token.and_then(|t| gates::counter(t.bytes()));
        if token.is_none_or(|t| t <= laned) {
            continue;
        }
        // (the row is a hash: its token was read)
        let lane = lane_in(&key);
        match out.iter_mut().find(|(n, _)| n.bytes() == lane.as_slice()) {
            Some((_, k)) => *k += 1,
            None => out.push((ctx.string(&lane), 1)),
        }
    }
    if !out.is_empty() {
        check(s, out.iter().map(|(n, _)| n.bytes()), true)?;
    }
    Ok(out)
}

/// Step 6 of a settle or reap, first: each counted lane's `active` lowered.
pub fn lower(s: &Scope, meta: &Key, counted: &Counted) {
    if counted.is_empty() {
        return;
    }
    let live = Live::open(s, meta);
    for (lane, k) in counted {
        live.add_active(lane.as_str(), -k);
    }
}

/// Step 6 of a settle or reap, last (after its pushes): each counted lane's insert and idle checks.
/// Whether an insert filled the empty ring (`ready` then goes on wake: [`Live::filled`]).
pub fn recheck(s: &Scope, meta: &Key, counted: &Counted) -> bool {
    if counted.is_empty() {
        return false;
    }
    let live = Live::open(s, meta);
    for (lane, _) in counted {
        live.checks(lane.as_str());
    }
    live.filled()
}

/// Step 6 on the lanes of a laned queue: `ring` and `lanes` open, the defaults read, at `now`.
pub struct Live<'s, 'a> {
    s: &'s Scope<'a>,
    ring: Key<'a, 'a>,
    lanes: Key<'a, 'a>,
    defaults: Defaults,
    now: i64,
    filled: std::cell::Cell<bool>,
}

impl<'s, 'a> Live<'s, 'a> {
    /// The lanes of the queue whose `meta` is given, as step 6 writes them.
    pub fn open(s: &'s Scope<'a>, meta: &Key) -> Live<'s, 'a> {
        Live::with(s, Defaults::read(meta))
    }

    /// [`Live::open`] with the defaults step 5 already read from `meta`.
    pub fn with(s: &'s Scope<'a>, defaults: Defaults) -> Live<'s, 'a> {
        Live::with_keys(s, defaults, None)
    }

    /// [`Live::with`] on the `ring` and `lanes` handles step 5 kept, if any (else opened here).
    pub fn with_keys(
        s: &'s Scope<'a>,
        defaults: Defaults,
        keys: Option<(Key<'a, 'a>, Key<'a, 'a>)>,
    ) -> Live<'s, 'a> {
        let (ring, lanes) = keys.unwrap_or_else(|| {
            (
                s.ctx.open_named(s.name(RING)),
                s.ctx.open_named(s.name(LANES)),
            )
        });
        Live {
            s,
            ring,
            lanes,
            defaults,
            now: s.now(),
            filled: std::cell::Cell::new(false),
        }
    }

    /// Whether an insert found the ring empty: the verb then writes `ready` on wake through its
    /// own handle (a second handle to wake in one verb may go stale), as the Lua twin's insert does.
    pub fn filled(&self) -> bool {
        self.filled.get()
    }

    /// Whether `lane` has ready jobs (its `lanes` score).
    fn ready(&self, lane: Str) -> bool {
        self.lanes.zscore(lane).is_some_and(|n| n > 0.0)
    }

    /// `ZINCRBY lanes n lane`, replicated.
    pub fn add_ready(&self, lane: Str, n: i64) {
        self.lanes.zincrby(n as f64, lane);
        let by = self.s.ctx.int(n);
        let args = [self.lanes.name(), by.as_str(), lane];
        self.s.ctx.replicate(c"ZINCRBY", &args);
    }

    /// `ZADD lanes NX 0 lane` (a lane with a setting has a member), replicated when added.
    pub fn ensure(&self, lane: Str) {
        if self.lanes.zscore(lane).is_none() {
            self.lanes.zadd(0.0, lane);
            let zero = lit().zero;
            self.s
                .ctx
                .replicate(c"ZADD", &[self.lanes.name(), zero, lane]);
        }
    }

    /// `HINCRBY lane:<lane> active by` (step 5 checked the counter), replicated as its effect.
    pub fn add_active(&self, lane: Str, by: i64) {
        let key = self.s.ctx.open_named(self.s.lane(lane.bytes()));
        let field = lit().lane.active;
        add(&key, field, counter(&key, field).unwrap_or(0), by);
    }

    /// insert(lane) (§10.3): when it has ready jobs and is not in the ring, paused, parked or at
    /// its concurrency, `LPUSH ring lane` and `HSET lane:<lane> ring 1`; waiting claims told.
    pub fn insert(&self, lane: Str) {
        if !self.ready(lane) {
            return;
        }
        let key = self.s.ctx.open_named(self.s.lane(lane.bytes()));
        if State::read(&key).insertable(true, self.now, &self.defaults) {
            self.inserted(lane, &key);
        }
    }

    /// insert(lane)'s writes, its lane's hash open as `key`.
    fn inserted(&self, lane: Str, key: &Key) {
        if !self.serving() {
            self.filled.set(true);
        }
        self.ring.push(false, lane);
        self.s.ctx.replicate(c"LPUSH", &[self.ring.name(), lane]);
        let one = self.s.ctx.int(1);
        key.hset(&[(lit().lane.ring, one.as_str())]);
        // a waiting claim waits on pending's name
        self.s.ctx.signal_ready(self.s.name(PENDING).as_str());
    }

    /// idle(lane) (§10.3): once it holds nothing, `DEL lane:<lane>` and `ZREM lanes lane`.
    pub fn idle(&self, lane: Str) {
        let key = self.s.ctx.open_named(self.s.lane(lane.bytes()));
        if State::read(&key).idle(self.ready(lane), self.now) {
            self.idled(lane, &key);
        }
    }

    /// idle(lane)'s writes, its lane's hash open as `key`.
    fn idled(&self, lane: Str, key: &Key) {
        if key.kind() != Kind::Empty {
            key.delete();
            self.s.ctx.replicate(c"DEL", &[key.name()]);
        }
        if self.lanes.zrem(lane) {
            self.s.ctx.replicate(c"ZREM", &[self.lanes.name(), lane]);
        }
    }

    /// REMOVE of a lane's last ready job: a lane left without ready jobs leaves the ring wherever
    /// it is (`LREM ring 0 lane`, `HDEL lane:<lane> ring`), so that its idle check can delete it and
    /// no claim meets it empty; replicated. LREM is O(ring length): REMOVE is an operator's verb,
    /// never on a claim's path.
    pub fn leave(&self, lane: Str) {
        if self.ready(lane) {
            return;
        }
        let key = self.s.ctx.open_named(self.s.lane(lane.bytes()));
        if !State::read(&key).ring {
            return;
        }
        self.ring.list_remove(lane.bytes());
        let ctx = self.s.ctx;
        ctx.replicate(c"LREM", &[self.ring.name(), lit().zero, lane]);
        key.hdel(&[lit().lane.ring]);
    }

    /// LIMIT of every lane's default (scope 2), for one lane, `old` the defaults before the call:
    /// when the default rate changed and the lane takes it (none of its own), its rate state goes
    /// (a new rate starts from a full bucket, as the queue's) and a park at the old rate's next
    /// token ends (`ZREM parked`; a penalty that outlasts it is kept); then its insert and idle
    /// checks, so that a lane held back only by the old default is served at once.
    pub fn rebase(&self, lane: Str, old: &Defaults) {
        if old.rate != self.defaults.rate {
            let key = self.s.ctx.open_named(self.s.lane(lane.bytes()));
            let st = State::read(&key);
            if st.rate.is_none() {
                let n = lit().lane;
                let mut gone = Vec::new();
                if let (Some(at), Some((rate, Some(tat)))) = (st.parked, st.rate_in_force(old)) {
                    if rate.next_token(tat) == at {
                        let parked = self.s.ctx.open_named(self.s.name(PARKED));
                        if parked.zrem(lane) {
                            self.s.ctx.replicate(c"ZREM", &[parked.name(), lane]);
                        }
                        gone.push(n.parked);
                    }
                }
                if key.hget(n.tat).is_some() {
                    gone.push(n.tat);
                }
                if !gone.is_empty() {
                    key.hdel(&gone);
                }
            }
        }
        self.checks(lane);
    }

    /// CLAIM's `turns` rotations in a row of the ring's tail lane to its head (`RPOPLPUSH ring
    /// ring` each), done and replicated as their net effect, `r` = `turns` mod the ring's length
    /// rotations: none when 0, `RPOPLPUSH ring ring` for one, else `RPOP ring r` and `LPUSH ring`
    /// of the lanes popped, in their order (two commands for a batch, not one per pick).
    pub fn rotate(&self, turns: usize) {
        let len = self.ring.value_len();
        if turns == 0 || len == 0 {
            return;
        }
        let r = turns % len;
        let mut moved = Vec::with_capacity(r);
        for _ in 0..r {
            if let Some(lane) = self.ring.pop_tail() {
                self.ring.push(false, lane.as_str());
                moved.push(lane);
            }
        }
        let ctx = self.s.ctx;
        let ring = self.ring.name();
        match moved.len() {
            0 => {}
            1 => ctx.replicate(c"RPOPLPUSH", &[ring, ring]),
            n => {
                let count = ctx.int(n as i64);
                ctx.replicate(c"RPOP", &[ring, count.as_str()]);
                let mut push = vec![ring];
                push.extend(moved.iter().map(Owned::as_str));
                ctx.replicate(c"LPUSH", &push);
            }
        }
    }

    /// CLAIM's eviction of the ring's tail lane `lane` (`RPOP ring`, `HDEL lane:<lane> ring`), parked
    /// until `park` when out of tokens (`HSET lane:<lane> parked`, `ZADD parked`); replicated.
    pub fn evict(&self, lane: Str, park: Option<i64>) {
        let ctx = self.s.ctx;
        self.ring.pop_tail();
        ctx.replicate(c"RPOP", &[self.ring.name()]);
        let key = ctx.open_named(self.s.lane(lane.bytes()));
        key.hdel(&[lit().lane.ring]);
        if let Some(at) = park {
            let at_s = ctx.int(at);
            key.hset(&[(lit().lane.parked, at_s.as_str())]);
            let parked = ctx.open_named(self.s.name(PARKED));
            parked.zadd(at as f64, lane);
            ctx.replicate(c"ZADD", &[parked.name(), at_s.as_str(), lane]);
        }
    }

    /// CLAIM's unpark of `lane`, whose time has come, and LIMIT's of a lane whose rate park ended
    /// (`ZREM parked`, `HDEL lane:<lane> parked`), then its insert check; replicated.
    pub fn unpark(&self, lane: Str) {
        let ctx = self.s.ctx;
        let parked = ctx.open_named(self.s.name(PARKED));
        if parked.zrem(lane) {
            ctx.replicate(c"ZREM", &[parked.name(), lane]);
        }
        ctx.open_named(self.s.lane(lane.bytes()))
            .hdel(&[lit().lane.parked]);
        self.insert(lane);
    }

    /// CLAIM's writes of a lane it took jobs from, whose hash is `key`, in one `HSET lane:<lane>
    /// active <n> [tat "<q> <r>"]` (replicated as such): `active` as the walk leaves it (the stored
    /// counter, lowered by the expired leases, plus the jobs picked: what `HINCRBY active k` would
    /// make it) and, under a rate, its state.
    pub fn took(&self, key: &Key, active: i64, tat: Option<(i64, i64)>) {
        let ctx = self.s.ctx;
        let n = lit().lane;
        let active = ctx.int(active);
        let tat = tat.map(|(q, r)| ctx.pair(q.into(), b' ', r.into()));
        match &tat {
            Some(t) => key.hset(&[(n.active, active.as_str()), (n.tat, t.as_str())]),
            None => key.hset(&[(n.active, active.as_str())]),
        }
    }

    /// Whether the ring holds a lane.
    pub fn serving(&self) -> bool {
        self.ring.kind() == Kind::List && self.ring.value_len() > 0
    }

    /// insert then idle: the end of every lane write. One read of the lane serves both: a lane
    /// insert puts in the ring has ready jobs, which idle would not delete.
    pub fn checks(&self, lane: Str) {
        let ready = self.ready(lane);
        let key = self.s.ctx.open_named(self.s.lane(lane.bytes()));
        let state = State::read(&key);
        if ready && state.insertable(true, self.now, &self.defaults) {
            self.inserted(lane, &key);
        } else if state.idle(ready, self.now) {
            self.idled(lane, &key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(f: [Option<&[u8]>; 7]) -> State {
        State::parse(f)
    }

    const D: Defaults = Defaults {
        conc: None,
        rate: None,
    };

    #[test]
    fn parses_what_the_verbs_write() {
        let s = state([
            Some(b"1"),
            Some(b"3"),
            None,
            Some(b"4"),
            Some(b"2 1000 1"),
            Some(b"17 1"),
            Some(b"99"),
        ]);
        assert!(s.ring && !s.paused && s.kept);
        assert_eq!(
            (s.active, s.conc, s.tat, s.parked),
            (3, Some(4), Some((17, 1)), Some(99))
        );
        assert_eq!(s.rate.map(|r| r.max), Some(2));
        let empty = state([None; 7]);
        assert_eq!(empty, State::default());
        // a negative active (more settles than counted claims) stays as HINCRBY leaves it
        assert_eq!(
            state([None, Some(b"-1"), None, None, None, None, None]).active,
            -1
        );
    }

    #[test]
    fn insert_and_idle() {
        let mut s = State::default();
        assert!(s.insertable(true, 0, &D));
        assert!(!s.insertable(false, 0, &D));
        assert!(s.idle(false, 0) && !s.idle(true, 0));
        s.active = 2;
        let two = Defaults {
            conc: Some(2),
            rate: None,
        };
        assert!(!s.insertable(true, 0, &two), "at the default concurrency");
        s.conc = Some(3);
        assert!(s.insertable(true, 0, &two), "its own limit wins");
        assert!(!s.idle(false, 0), "held jobs keep it");
        let parked = State {
            parked: Some(10),
            kept: true,
            ..State::default()
        };
        assert!(!parked.insertable(true, 9, &D) && parked.insertable(true, 10, &D));
        assert!(!parked.idle(false, 11), "a parked field keeps it");
        let tat = State {
            tat: Some((10, 0)),
            ..State::default()
        };
        assert!(!tat.idle(false, 9) && tat.idle(false, 10));
    }

    /// Defaults of one claim per `per` ms (burst 1) and concurrency `conc`.
    fn one_per(per: i64, conc: Option<i64>) -> Defaults {
        Defaults {
            conc,
            rate: Some(Rate {
                max: 1,
                per,
                burst: 1,
            }),
        }
    }

    #[test]
    fn the_walk_verdict() {
        let d = one_per(1000, Some(1));
        let mut s = State::default();
        assert_eq!(s.verdict(false, 0, &d), Verdict::Evict);
        assert_eq!(s.verdict(true, 0, &d), Verdict::Eligible);
        s.take(0, &d);
        assert_eq!((s.active, s.tat), (1, Some((1000, 0))));
        assert_eq!(s.verdict(true, 0, &d), Verdict::Evict, "at its concurrency");
        s.active = 0;
        assert_eq!(s.verdict(true, 0, &d), Verdict::Park(1000), "out of tokens");
        assert_eq!(s.verdict(true, 1000, &d), Verdict::Eligible);
        s.paused = true;
        assert_eq!(s.verdict(true, 1000, &d), Verdict::Evict);
    }

    #[test]
    fn a_rate_park_is_told_from_a_penalty() {
        let d = one_per(20_000, None);
        let mut s = State::default();
        s.take(0, &d);
        let Verdict::Park(at) = s.verdict(true, 0, &d) else {
            panic!("out of tokens")
        };
        s.parked = Some(at);
        assert!(s.rate_parked(&d), "the park the walk writes");
        assert!(!s.rate_parked(&D), "no rate in force: not the rate's");
        s.parked = Some(at + 1);
        assert!(!s.rate_parked(&d), "a later penalty");
        s.parked = Some(at - 1);
        assert!(
            !s.rate_parked(&d),
            "an earlier penalty on a lane not parked by its rate"
        );
    }
}
