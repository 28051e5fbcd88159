//! What ACK, RETRY, BURY, EXTEND and PROGRESS share (the twin of `lib/lua/leases.ts`'s
//! `emq_held`): step 5 of a settle — no id twice, the types of meta, of the structures the
//! verb writes (active first) and of the queue's `events` (but EXTEND's), each job's row, the
//! verb's meta counter, the cluster probe, and only then the stale jobs refused, every one of
//! them, in argument order. A job is held when it is in active and its row's `token` is the
//! call's.

use super::dedup::{self, Going};
use super::events::Events;
use super::history::{self, History, Tally};
use super::lanes::{self, Counted};
use super::limits;
use super::scope::Scope;
use super::{add, counter, mark_ready, once};
use crate::command::{Args, Reply};
use crate::ffi::{Key, Kind, Owned, Str};
use crate::gates;
use crate::keyspace::{ACTIVE, WAKE};
use crate::literals::lit;
use crate::spec::TOKENS_PER_MS;
use crate::wire::Refusal;

/// How a verb's jobs leave (what its step 5 checks besides the leases).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Leaves {
    /// They stay active (EXTEND, PROGRESS).
    Stay,
    /// They leave active (RETRY, RELEASE): a slot of a limited queue is freed (`limits::freeing`).
    Active,
    /// They leave for good (ACK, BURY): a slot too, and their deduplication keys (checked after the
    /// counter).
    Gone,
}

/// A counting settle's history: what it counts, now, and each job's (claim, ready) ms.
type Counting<'a> = (History<'a>, Tally, i64, Vec<(i64, i64)>);

/// A settle whose every job is held, with what its writes need.
pub struct Settle<'a> {
    /// The jobs' ids (group argument 0), none twice.
    pub ids: Vec<Str<'a>>,
    /// Their rows, in the same order.
    pub rows: Vec<Owned<'a>>,
    /// The queue's `meta`.
    pub meta: Key<'a, 'a>,
    /// The meta counter the verb increments and its current value, if it keeps one.
    counter: Option<(Str<'static>, i64)>,
    /// For a verb after which the jobs are gone for good (ACK, BURY): the deduplication keys
    /// they hold, to let go (`dedup::let_go`).
    pub dedup: Option<Going<'a>>,
    /// Whether the queue has a concurrency limit a slot of which the settle frees.
    freeing: bool,
    /// The lanes whose `active` the settle lowers (a laned queue's, `lanes::counted`).
    counted: Counted<'a>,
    /// The queue's events.
    pub events: Events<'a>,
    /// The queue's history, when the verb counts (ACK, RETRY, BURY) and the queue keeps one: what
    /// it counts, now, and each job's claim and ready times (ms) for the latency histograms.
    history: Option<Counting<'a>>,
}

impl<'a> Settle<'a> {
    /// Lets go of the deduplication keys its jobs hold (ACK, BURY), before their rows change.
    pub fn let_go(&self, now: i64) {
        if let Some(going) = &self.dedup {
            dedup::let_go(self.meta.ctx(), going, now);
        }
    }

    /// The jobs' lanes' `active` lowered (§10.5), right after they leave active.
    pub fn lower(&self, s: &Scope<'a>) {
        lanes::lower(s, &self.meta, &self.counted);
    }

    /// The wake of a freed slot (`limits::freed`) and the lanes' insert and idle checks, after the
    /// verb's own writes.
    pub fn freed(&self, s: &Scope<'a>) {
        if lanes::recheck(s, &self.meta, &self.counted) {
            // no write follows through the verb's own wake handle, if it has one
            mark_ready(&s.ctx.open_named(s.name(WAKE)));
        }
        limits::freed(s, &self.meta, self.freeing);
    }

    /// Closes its handles (`meta`, `events`, the deduplication keys) until [`reopen`](Self::reopen):
    /// SETTLE checks every part before it writes any (`Key::close`).
    pub fn close(&mut self) {
        self.meta.close();
        self.events.close();
        if let Some((h, ..)) = &mut self.history {
            h.close();
        }
        if let Some(going) = &mut self.dedup {
            going.d.close();
        }
    }

    /// Opens its handles again, on the keyspace as the writes before it left it.
    pub fn reopen(&mut self) {
        self.meta.reopen();
        self.events.reopen();
        if let Some((h, ..)) = &mut self.history {
            h.reopen();
        }
        if let Some(going) = &mut self.dedup {
            going.d.reopen();
        }
    }

    /// The settle's last meta write — its counter, if it keeps one, plus the jobs settled — then
    /// its minute of history, and its reply: how many.
    pub fn done(&self) -> Reply<'a> {
        let n = self.ids.len() as i64;
        if let Some((field, total)) = self.counter {
            add(&self.meta, field, total, n);
        }
        if let Some((h, what, now, latency)) = &self.history {
            h.add(*now, *what, n, latency);
        }
        Reply::Int(n)
    }
}

/// Checks a settle (group arguments 0 and 1: id and token) on the queue's `structures` (type and
/// kind, active first; then, for a verb that writes events, the queue's `events`), with `total`
/// the meta counter the verb increments and `leaves` how its jobs leave; the jobs held and the
/// structures opened, or the refusal.
pub fn held<'a, const N: usize>(
    s: &mut Scope<'a>,
    args: &Args<'a>,
    (structures, writes_events): ([(&[u8], Kind); N], bool),
    total: Option<Str<'static>>,
    leaves: Leaves,
) -> Result<(Settle<'a>, [Key<'a, 'a>; N]), Refusal> {
    let ids = args.ids();
    once(&ids)?;
    let meta = s.meta()?;
    let mut keys = Vec::with_capacity(N);
    for (ty, kind) in structures {
        keys.push(s.structure(ty, kind)?);
    }
    let keys: [Key<'a, 'a>; N] = keys
        .try_into()
        .unwrap_or_else(|_| unreachable!("N structures"));
    let events = if writes_events {
        Events::open(s, &meta)?
    } else {
        Events::none(s)
    };
    let freeing = leaves != Leaves::Stay && limits::freeing(s, &meta)?;
    let l = lit();
    let mut rows = Vec::with_capacity(args.jobs());
    let mut stale = Vec::new();
    // a counting settle's jobs, for the latency histograms: (their claim's ms, when they became ready)
    let counting = total.and_then(tally);
    let mut latency = Vec::new();
    for j in 0..args.jobs() {
        let id = args.job_bytes(j, 0);
        let name = s.row(id.bytes());
        let row = s.expect(name.as_str(), Kind::Hash)?;
        let token = args.job_number(j, 1).to_string();
        let ok = row.kind() == Kind::Hash
            && keys[0].zscore(id).is_some()
            && row
                .hget(l.row.token)
                .is_some_and(|t| t.bytes() == token.as_bytes());
        if ok && counting.is_some() {
            let ms = |f: Str| {
                row.hget(f)
                    .and_then(|v| gates::digits(v.bytes()))
                    .map_or(0, |x| x as i64)
            };
            let claim = args.job_number(j, 1) / TOKENS_PER_MS;
            latency.push((claim, ms(l.row.created_ms).max(ms(l.row.due_ms))));
        }
        if !ok {
            stale.push(id.bytes().to_vec());
        }
        drop(row);
        rows.push(name);
    }
    let counter = match total {
        Some(field) => Some((field, counter(&meta, field)?)),
        None => None,
    };
    // the counting settles' history, checked after their counter
    let history = match counting {
        Some(what) => history::open(s, &meta)?.map(|h| (h, what, s.now(), latency)),
        None => None,
    };
    let dedup = if leaves == Leaves::Gone {
        let jobs: Vec<(Str, Str)> = ids
            .iter()
            .zip(&rows)
            .map(|(&i, r)| (i, r.as_str()))
            .collect();
        dedup::letting_go(s, &jobs)?
    } else {
        None
    };
    let counted = if leaves == Leaves::Stay {
        Vec::new()
    } else {
        lanes::counted(s, &meta, &rows, &vec![true; rows.len()])?
    };
    s.probe()?;
    if !stale.is_empty() {
        return Err(Refusal::LeaseLost(stale));
    }
    let settle = Settle {
        ids,
        rows,
        meta,
        counter,
        dedup,
        freeing,
        counted,
        events,
        history,
    };
    Ok((settle, keys))
}

/// What a settle counting `total` (a `meta` counter) counts in the history.
fn tally(total: Str) -> Option<Tally> {
    let l = lit();
    let is = |f: Str| f.bytes() == total.bytes();
    if is(l.meta.acked) {
        Some(Tally::Acked)
    } else if is(l.meta.buried) {
        Some(Tally::Buried)
    } else if is(l.meta.retried) {
        Some(Tally::Retried)
    } else {
        None
    }
}

/// ACK's and BURY's [`held`]: the jobs leave active for good ([`Leaves::Gone`]) into `set`
/// (`completed`, `dead`), counted in `total`; the structures `[active, set]`.
pub fn held_for_good<'a>(
    s: &mut Scope<'a>,
    args: &Args<'a>,
    set: &[u8],
    total: Str<'static>,
) -> Result<(Settle<'a>, [Key<'a, 'a>; 2]), Refusal> {
    let structures = [(ACTIVE, Kind::Zset), (set, Kind::Zset)];
    held(s, args, (structures, true), Some(total), Leaves::Gone)
}

/// The settled jobs leave active: `ZREM active <ids…>`, replicated; then their lanes' `active`.
pub fn leave_active(s: &Scope, settle: &Settle, active: &Key) {
    let ids = &settle.ids;
    for &id in ids {
        active.zrem(id);
    }
    let mut zrem: Vec<Str> = vec![active.name()];
    zrem.extend(ids);
    active.ctx().replicate(c"ZREM", &zrem);
    settle.lower(s);
}

/// ACK's and BURY's first writes, after [`held_for_good`]: the jobs' deduplication keys let go and
/// the jobs out of active. Hands back the settle, the set they go into, the rest of the check and
/// now.
pub fn leave_for_good<'a, X>(
    s: &Scope<'a>,
    checked: Checked<'a, 2, X>,
) -> (Settle<'a>, Key<'a, 'a>, X, i64) {
    let Checked {
        settle,
        keys: [active, set],
        with,
    } = checked;
    let now = s.now();
    settle.let_go(now);
    leave_active(s, &settle, &active);
    (settle, set, with, now)
}

/// A settling verb's step 5 done (ACK, RETRY, BURY, RELEASE): the jobs held, the structures it
/// opened (in its order), and what else its writes need (`with`).
pub struct Checked<'a, const N: usize, X> {
    /// The jobs held.
    pub settle: Settle<'a>,
    /// The structures it opened.
    pub keys: [Key<'a, 'a>; N],
    /// What else its writes need.
    pub with: X,
}

impl<const N: usize, X> Checked<'_, N, X> {
    /// Closes its handles until [`reopen`](Self::reopen) (`Key::close`): SETTLE's parts write after
    /// every part's checks, and a handle caches the value it found.
    pub fn close(&mut self) {
        self.settle.close();
        close_all(&mut self.keys);
    }

    /// Opens its handles again, on the keyspace as it is now.
    pub fn reopen(&mut self) {
        self.settle.reopen();
        reopen_all(&mut self.keys);
    }
}

/// Closes every handle of `keys` (`Key::close`).
pub fn close_all(keys: &mut [Key]) {
    for key in keys {
        key.close();
    }
}

/// Opens every handle of `keys` again (`Key::reopen`).
pub fn reopen_all(keys: &mut [Key]) {
    for key in keys {
        key.reopen();
    }
}
