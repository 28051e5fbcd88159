//! CLAIM's walk, decided before anything is written (docs/design/lanes.md §10.6): the ready jobs of
//! a lane as RPOP will hand them out once the claim's moves are written ([`Jobs`]), and, in a laned
//! queue, the ring and the lanes' states simulated in exactly the order step 6 writes them
//! ([`simulate`]). Step 6 replays the outcome ([`Laned`]); nothing here writes. The keys step 6
//! writes through step 5's handles are [`Held`].

use std::collections::VecDeque;

use super::counter;
use super::lanes::{self, Counted, Defaults, State, Verdict};
use super::move_due::Due;
use super::ready::parse_priority;
use super::scope::Scope;
use crate::ffi::{Again, Key, Kind, Owned, Str};
use crate::keyspace::{LANES, PARKED, RING};
use crate::literals::lit;
use crate::spec::CLAIM_MOVE_LIMIT;
use crate::wire::Refusal;

/// The ids this claim moves onto the ready lists: its expired leases (RPUSHed) and due ids
/// (LPUSHed).
#[derive(Clone, Copy)]
pub struct Moved<'x, 'a> {
    /// Expired leases.
    pub expired: &'x Due<'a>,
    /// Due scheduled ids.
    pub due: &'x Due<'a>,
}

impl Moved<'_, '_> {
    /// The places in `d` of the ids bound for `lane` at `p`.
    fn at(d: &Due, lane: &[u8], p: u64) -> Vec<usize> {
        (0..d.len())
            .filter(|&k| d.plan.places[k].1 == p && d.plan.places[k].0 == lane)
            .collect()
    }
}

/// A key step 5 opened for step 6 to write. Step 6 reaches it only through [`Held::again`]: the
/// handle itself while it is open, else a new one on the keyspace as it is then. Step 5 releases
/// the handle when a write of step 6 may make, delete or change its key before its use (a handle
/// caches the value it found).
pub struct Held<'a>(Key<'a, 'a>);

impl<'a> Held<'a> {
    /// The key for one use.
    pub fn again(&self) -> Again<'_, 'a, 'a> {
        self.0.again()
    }

    /// Its name.
    pub fn name(&self) -> Str<'_> {
        self.0.name()
    }

    /// Closes the handle: each use opens the key anew.
    pub fn release(&mut self) {
        self.0.close();
    }
}

/// A job the walk will claim: its id, row and attempts after this claim.
pub struct Pick<'a> {
    /// Its id.
    pub id: Owned<'a>,
    /// Its row.
    pub row: Held<'a>,
    /// Its attempts, this claim included.
    pub attempts: i64,
    /// Its lane.
    pub lane: usize,
}

/// What the walk pops from one list: `k` ids from the tail of `list` (lane `lane` at `p`).
pub struct Pop<'a> {
    /// The lane's place in [`Laned::lanes`] (0 in a queue that is not laned).
    pub lane: usize,
    /// The lane's name.
    pub name: Owned<'a>,
    /// The priority.
    pub p: u64,
    /// The list (`pending`'s released: its pops go through the queue's `pending`).
    pub list: Held<'a>,
    /// How many.
    pub k: usize,
}

/// One ready list of a lane as the walk pops it: the expired ids RPUSHed onto it (the last first),
/// its stored ids from the tail, then the due ids LPUSHed onto it (in push order).
struct Level<'a> {
    p: u64,
    list: Key<'a, 'a>,
    len: usize,
    exp: Vec<usize>,
    due: Vec<usize>,
    taken: usize,
}

impl<'a> Level<'a> {
    fn open(s: &mut Scope<'a>, lane: &[u8], p: u64, m: Moved<'_, 'a>) -> Result<Self, Refusal> {
        let list = s.open_owned(s.ready(lane, p), Kind::List)?;
        let len = if list.kind() == Kind::List {
            list.value_len()
        } else {
            0
        };
        Ok(Level {
            p,
            list,
            len,
            exp: Moved::at(m.expired, lane, p),
            due: Moved::at(m.due, lane, p),
            taken: 0,
        })
    }

    fn left(&self) -> bool {
        self.taken < self.exp.len() + self.len + self.due.len()
    }

    /// The next candidate (the level must have one left).
    fn next(&mut self, s: &mut Scope<'a>, m: Moved<'_, 'a>) -> Result<Candidate<'a>, Refusal> {
        self.taken += 1;
        let (i, ctx) = (self.taken, s.ctx);
        let copy = |d: &Due<'a>, k: usize| Candidate {
            id: ctx.string(d.ids[k].bytes()),
            row: ctx.open_named(ctx.string(d.rows[k].bytes())),
            exists: d.exists[k],
            attempts: None,
        };
        if i <= self.exp.len() {
            return Ok(copy(m.expired, self.exp[self.exp.len() - i]));
        }
        if i > self.exp.len() + self.len {
            return Ok(copy(m.due, self.due[i - self.exp.len() - self.len - 1]));
        }
        let id = self
            .list
            .index(-((i - self.exp.len()) as i64))
            .unwrap_or_else(|| ctx.string(b""));
        // the row, opened here once: typed, and when it exists its attempts read (a counter)
        let row = s.expect_owned(s.row_of(id.bytes()), Kind::Hash)?;
        let exists = row.kind() == Kind::Hash;
        let attempts = if exists {
            Some(counter(&row, lit().row.attempts)?)
        } else {
            None
        };
        Ok(Candidate {
            id,
            row,
            exists,
            attempts,
        })
    }
}

/// A lane's ready jobs as the walk takes them: its levels, lowest priority first. Priority 0 is
/// opened first; the others (`levels:<lane>` and the priorities this claim moves ids to) only once
/// it is exhausted, so that a queue without priorities opens nothing more.
pub struct Jobs<'a> {
    lane: Owned<'a>,
    levels: Vec<Level<'a>>,
    loaded: bool,
}

impl<'a> Jobs<'a> {
    /// The jobs of `lane`.
    pub fn new(s: &mut Scope<'a>, lane: &[u8], m: Moved<'_, 'a>) -> Result<Self, Refusal> {
        Ok(Jobs {
            lane: s.ctx.string(lane),
            levels: vec![Level::open(s, lane, 0, m)?],
            loaded: false,
        })
    }

    /// The level the next candidate comes from, if any.
    fn current(&mut self, s: &mut Scope<'a>, m: Moved<'_, 'a>) -> Result<Option<usize>, Refusal> {
        if let Some(i) = self.levels.iter().position(Level::left) {
            return Ok(Some(i));
        }
        if self.loaded {
            return Ok(None);
        }
        self.loaded = true;
        let lane = self.lane.bytes();
        let mut order: Vec<u64> = Vec::new();
        let levels = s.open_owned(s.levels(lane), Kind::Zset)?;
        for member in levels.due(f64::INFINITY, u64::MAX) {
            order.push(parse_priority(member.bytes()));
        }
        drop(levels);
        for d in [m.expired, m.due] {
            order.extend(
                d.plan
                    .places
                    .iter()
                    .filter(|pl| pl.0 == lane)
                    .map(|pl| pl.1),
            );
        }
        order.retain(|&p| p > 0);
        order.sort_unstable();
        order.dedup();
        for p in order {
            let level = Level::open(s, self.lane.bytes(), p, m)?;
            self.levels.push(level);
        }
        Ok(self.levels.iter().position(Level::left))
    }

    /// Whether a candidate is left.
    pub fn any(&mut self, s: &mut Scope<'a>, m: Moved<'_, 'a>) -> Result<bool, Refusal> {
        Ok(self.current(s, m)?.is_some())
    }

    /// The next candidate.
    pub fn next(
        &mut self,
        s: &mut Scope<'a>,
        m: Moved<'_, 'a>,
    ) -> Result<Option<Candidate<'a>>, Refusal> {
        match self.current(s, m)? {
            None => Ok(None),
            Some(i) => Ok(Some(self.levels[i].next(s, m)?)),
        }
    }

    /// What the walk pops, list by list, as lane `lane` (the lists it pops nothing from closed).
    pub fn into_pops(self, lane: usize) -> impl Iterator<Item = Pop<'a>> {
        let name = self.lane;
        self.levels
            .into_iter()
            .filter(|l| l.taken > 0)
            .map(move |l| {
                let mut list = Held(l.list);
                if name.bytes().is_empty() && l.p == 0 {
                    list.release();
                }
                Pop {
                    lane,
                    name: list.0.ctx().string(name.bytes()),
                    p: l.p,
                    list,
                    k: l.taken,
                }
            })
    }
}

/// A job the walk may claim: its id, its row, whether the row exists and, when the walk already
/// read them, its stored attempts (checked as a counter).
pub struct Candidate<'a> {
    id: Owned<'a>,
    row: Key<'a, 'a>,
    exists: bool,
    attempts: Option<i64>,
}

/// A candidate picked when its row exists (its attempts a counter), else popped and dropped.
pub fn pick<'a>(picks: &mut Vec<Pick<'a>>, c: Candidate<'a>, lane: usize) -> Result<bool, Refusal> {
    let Candidate {
        id,
        row,
        exists,
        attempts,
    } = c;
    if !exists {
        return Ok(false);
    }
    let attempts = match attempts {
        Some(n) => n,
        None => counter(&row, lit().row.attempts)?,
    } + 1;
    picks.push(Pick {
        id,
        row: Held(row),
        attempts,
        lane,
    });
    Ok(true)
}

/// The ring as the walk leaves it, read lazily: the stored list (`len` elements, `consumed` of
/// them popped from its tail) after the elements pushed on its head (`head`, front first).
#[derive(Debug, Default)]
pub struct Ring {
    len: usize,
    consumed: usize,
    head: VecDeque<Vec<u8>>,
}

impl Ring {
    /// The ring of a stored list of `len` elements.
    pub fn new(len: usize) -> Ring {
        Ring {
            len,
            ..Ring::default()
        }
    }

    /// The tail element; `stored(i)` reads the stored list at index `i` from its tail (-1 last).
    pub fn tail(&self, stored: impl Fn(i64) -> Option<Vec<u8>>) -> Option<Vec<u8>> {
        if self.consumed < self.len {
            stored(-((self.consumed + 1) as i64))
        } else {
            self.head.back().cloned()
        }
    }

    /// `RPOP`.
    pub fn pop(&mut self) {
        if self.consumed < self.len {
            self.consumed += 1;
        } else {
            self.head.pop_back();
        }
    }

    /// `LPUSH`.
    pub fn push(&mut self, lane: Vec<u8>) {
        self.head.push_front(lane);
    }

    /// `RPOPLPUSH ring ring` of the tail element `lane`.
    pub fn rotate(&mut self, lane: Vec<u8>) {
        self.pop();
        self.push(lane);
    }
}

/// What the walk does to the ring, in order.
pub enum RingOp {
    /// `RPOPLPUSH ring ring`.
    Rotate,
    /// `RPOP ring` of lane `.0`, `HDEL lane:<L> ring`, and when out of tokens parked until `.1`.
    Evict(usize, Option<i64>),
}

/// One lane the claim touches: its name, state hash, state as the walk leaves it, ready score,
/// jobs.
pub struct Lane<'a> {
    /// Its name.
    pub name: Owned<'a>,
    /// Its state hash (released when the claim evicts or unparks the lane: that goes through
    /// handles of its own, which may delete the hash).
    pub key: Held<'a>,
    /// Its state.
    pub state: State,
    score: f64,
    jobs: Option<Jobs<'a>>,
    /// Jobs picked from it.
    pub picked: i64,
    /// Evicted by the walk (its idle check follows the claim's writes).
    pub evicted: bool,
    /// Let back from `parked` by this claim.
    pub unparked: bool,
}

/// A laned claim decided: what step 6 replays after its moves.
pub struct Laned<'a> {
    /// Every lane the claim touched.
    pub lanes: Vec<Lane<'a>>,
    /// The lanes whose `active` the expired leases lower.
    pub counted: Counted<'a>,
    /// Parked lanes whose time has come.
    pub unparked: Vec<Owned<'a>>,
    /// The walk's ring operations.
    pub ops: Vec<RingOp>,
    /// The defaults of lanes without their own limits.
    pub defaults: Defaults,
    /// `parked`'s lowest score as step 5 read it.
    parked_head: Option<f64>,
    /// `ring` and `lanes` as step 5 opened them, until step 6 takes them (none once released:
    /// [`Laned::release`]).
    pub keys: Option<(Key<'a, 'a>, Key<'a, 'a>)>,
}

/// The simulation's view of the lanes: the ring, the states loaded so far.
struct Sim<'x, 'a> {
    ring: Ring,
    stored: Key<'a, 'a>,
    scores: Key<'a, 'a>,
    lanes: Vec<Lane<'a>>,
    now: i64,
    d: Defaults,
    m: Moved<'x, 'a>,
}

impl<'a> Sim<'_, 'a> {
    /// The place of `lane` in `lanes`, its state read (typed, its `active` a counter) when new.
    fn lane(&mut self, s: &mut Scope<'a>, lane: &[u8]) -> Result<usize, Refusal> {
        if let Some(i) = self.lanes.iter().position(|l| l.name.bytes() == lane) {
            return Ok(i);
        }
        let name = s.ctx.string(lane);
        let key = s.expect_owned(s.lane(lane), Kind::Hash)?;
        let state = State::read_counted(&key)?;
        let score = self.scores.zscore(name.as_str()).unwrap_or(0.0);
        self.lanes.push(Lane {
            name,
            key: Held(key),
            state,
            score,
            jobs: None,
            picked: 0,
            evicted: false,
            unparked: false,
        });
        Ok(self.lanes.len() - 1)
    }

    /// insert(L) on the simulated state.
    fn insert(&mut self, i: usize) {
        let l = &mut self.lanes[i];
        if l.state.insertable(l.score > 0.0, self.now, &self.d) {
            l.state.ring = true;
            self.ring.push(l.name.bytes().to_vec());
        }
    }

    /// Lane `i`'s verdict now (its jobs opened when first needed).
    fn verdict(&mut self, s: &mut Scope<'a>, i: usize) -> Result<Verdict, Refusal> {
        if self.lanes[i].jobs.is_none() {
            let jobs = Jobs::new(s, self.lanes[i].name.bytes(), self.m)?;
            self.lanes[i].jobs = Some(jobs);
        }
        let has = self.lanes[i]
            .jobs
            .as_mut()
            .map_or(Ok(false), |j| j.any(s, self.m))?;
        Ok(self.lanes[i].state.verdict(has, self.now, &self.d))
    }

    /// Evicts the tail lane `i` (parked until `park` when out of tokens).
    fn evict(&mut self, i: usize, park: Option<i64>, ops: &mut Vec<RingOp>) {
        self.ring.pop();
        let l = &mut self.lanes[i];
        l.state.ring = false;
        l.evicted = true;
        l.key.release();
        if park.is_some() {
            l.state.parked = park;
        }
        ops.push(RingOp::Evict(i, park));
    }
}

/// Steps 1–4 of a laned claim (§10.6), simulated on the state step 5 reads: the expired leases'
/// lanes lowered, the moves' lanes scored and inserted, the unparked lanes inserted, then the walk
/// picks up to `room` jobs into `picks`. Every key it will write is typed.
pub fn simulate<'a>(
    s: &mut Scope<'a>,
    meta: &Key,
    m: Moved<'_, 'a>,
    now: i64,
    room: usize,
    picks: &mut Vec<Pick<'a>>,
) -> Result<Laned<'a>, Refusal> {
    let counted = lanes::counted(s, meta, &m.expired.rows, &m.expired.exists)?;
    let stored = s.structure(RING, Kind::List)?;
    let scores = s.structure(LANES, Kind::Zset)?;
    let parked = s.structure(PARKED, Kind::Zset)?;
    let len = if stored.kind() == Kind::List {
        stored.value_len()
    } else {
        0
    };
    let mut sim = Sim {
        ring: Ring::new(len),
        stored,
        scores,
        lanes: Vec::new(),
        now,
        d: Defaults::read(meta),
        m,
    };
    // 1. the expired leases' lanes
    for (lane, k) in &counted {
        let i = sim.lane(s, lane.bytes())?;
        sim.lanes[i].state.active -= k;
    }
    // 2. the moves, group by group
    for g in m.due.plan.groups.iter().chain(&m.expired.plan.groups) {
        let i = sim.lane(s, g.lane.bytes())?;
        sim.lanes[i].score += g.ids.len() as f64;
        sim.insert(i);
    }
    // 3. the parked lanes whose time has come
    let unparked = parked.due(now as f64, CLAIM_MOVE_LIMIT);
    let parked_head = parked.first_score();
    drop(parked);
    for lane in &unparked {
        let i = sim.lane(s, lane.bytes())?;
        sim.lanes[i].state.parked = None;
        sim.lanes[i].unparked = true;
        sim.lanes[i].key.release();
        sim.insert(i);
    }
    // 4. the walk
    let mut ops = Vec::new();
    while picks.len() < room {
        let stored = &sim.stored;
        let read = |at: i64| stored.index(at).map(|v| v.bytes().to_vec());
        let Some(tail) = sim.ring.tail(read) else {
            break;
        };
        let i = sim.lane(s, &tail)?;
        match sim.verdict(s, i)? {
            Verdict::Evict => sim.evict(i, None, &mut ops),
            Verdict::Park(at) => sim.evict(i, Some(at), &mut ops),
            Verdict::Eligible => {
                let job = sim.lanes[i].jobs.as_mut().map(|j| j.next(s, m));
                let Some(job) = job.transpose()?.flatten() else {
                    continue;
                };
                // a missing row: dropped, and the lane visited again
                if !pick(picks, job, i)? {
                    continue;
                }
                let l = &mut sim.lanes[i];
                l.picked += 1;
                l.state.take(now, &sim.d);
                match sim.verdict(s, i)? {
                    Verdict::Eligible => {
                        sim.ring.rotate(tail);
                        ops.push(RingOp::Rotate);
                    }
                    Verdict::Evict => sim.evict(i, None, &mut ops),
                    Verdict::Park(at) => sim.evict(i, Some(at), &mut ops),
                }
            }
        }
    }
    Ok(Laned {
        lanes: sim.lanes,
        counted,
        unparked,
        ops,
        defaults: sim.d,
        parked_head,
        keys: Some((sim.stored, sim.scores)),
    })
}

impl<'a> Laned<'a> {
    /// `parked`'s lowest score once step 6 wrote the claim: as step 5 read it unless the claim
    /// unparked or parked a lane (then read again).
    pub fn parked_head(&self, s: &Scope<'a>) -> Option<f64> {
        let parks = self
            .ops
            .iter()
            .any(|op| matches!(op, RingOp::Evict(_, Some(_))));
        if self.unparked.is_empty() && !parks {
            return self.parked_head;
        }
        s.ctx.open_named(s.name(PARKED)).first_score()
    }

    /// What the walk pops, list by list, lane by lane (the lanes' jobs closed).
    pub fn pops(&mut self) -> Vec<Pop<'a>> {
        let mut out = Vec::new();
        for (i, l) in self.lanes.iter_mut().enumerate() {
            if let Some(jobs) = l.jobs.take() {
                out.extend(jobs.into_pops(i));
            }
        }
        out
    }

    /// Releases the handles step 5 kept for step 6: `ring`, `lanes` and the lanes' hashes.
    pub fn release(&mut self) {
        self.keys = None;
        for l in &mut self.lanes {
            l.key.release();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;

    /// The ring as a list, head first, over `stored` (head first).
    fn list(r: &Ring, stored: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = r
            .head
            .iter()
            .map(|v| String::from_utf8(v.clone()).unwrap())
            .collect();
        out.extend(stored[..r.len - r.consumed].iter().map(|s| s.to_string()));
        out
    }

    #[test]
    fn ring_ops_as_the_list_commands() {
        let stored = ["c", "b", "a"];
        let read = |at: i64| {
            let i = stored.len() as i64 + at;
            (i >= 0).then(|| stored[i as usize].as_bytes().to_vec())
        };
        let mut r = Ring::new(stored.len());
        assert_eq!(r.tail(read), Some(b"a".to_vec()));
        r.rotate(b"a".to_vec());
        assert_eq!(list(&r, &stored), ["a", "c", "b"]);
        assert_eq!(r.tail(read), Some(b"b".to_vec()));
        r.pop();
        r.push(b"d".to_vec());
        assert_eq!(list(&r, &stored), ["d", "a", "c"]);
        r.rotate(b"c".to_vec());
        // the stored list is used up: the tail is the last element pushed on the head's far end
        assert_eq!(r.tail(read), Some(b"a".to_vec()));
        r.rotate(b"a".to_vec());
        assert_eq!(list(&r, &stored), ["a", "c", "d"]);
        r.pop();
        r.pop();
        r.pop();
        assert_eq!(r.tail(read), None);
        r.pop();
        assert_eq!(list(&r, &stored), Vec::<String>::new());
    }
}
