//! What ENQUEUE, SCHEDULE and TICK share (the twin of `lib/lua/admit.ts`): step 5 of an admission
//! (`admit`: no id twice, no row already there — the first such id is a duplicate — then the types
//! of meta, of the structure written, of wake and of events, meta's `enqueued` counter, and, when a
//! job carries a `dedup` key, who holds each key: the plan of which jobs are admitted and which
//! fold into a holder), and the first writes (`admitted`: the queue's `meta` made on first use, the
//! admissions counted, the keys taken, the debounced holders given their new payload); last, the
//! admission's events (`Admission::announce`).

use super::dedup::{self, Dedup, Holder};
use super::events::{blank, Events, Fields};
use super::lanes::{self, Live};
use super::ready::{self, Place, Plan};
use super::scope::Scope;
use super::{add, counter, made, mark_ready, once};
use crate::command::{Args, Reply};
use crate::ffi::{Ctx, Key, Kind, Owned, Str};
use crate::keyspace::{PENDING, WAKE};
use crate::literals::lit;
use crate::options::Options;
use crate::wire::Refusal;

/// A job not admitted: its place in the call, the job it folded into, whether it was debounced.
pub struct Fold<'a> {
    /// Its place in the call (0-based).
    pub place: usize,
    /// The holder's id.
    pub holder: Owned<'a>,
    /// Debounced (the holder took its payload) rather than deduplicated.
    pub debounced: bool,
}

/// A debounced holder outside the call: its row takes the payload (and due time) of a later job.
struct Debounce<'a> {
    holder: Holder<'a>,
    /// The place whose payload (and due time) it takes.
    from: usize,
}

/// An admission that may be written.
pub struct Admission<'a> {
    /// Every id of the call (group argument 0), none twice.
    pub ids: Vec<Str<'a>>,
    /// Their rows, none of which exists.
    pub rows: Vec<Owned<'a>>,
    /// The places of the jobs admitted, in call order.
    pub admitted: Vec<usize>,
    /// For each place, the place whose payload (and due time) its row takes: its own, or the last
    /// job of the call debounced into it.
    pub source: Vec<usize>,
    /// The jobs not admitted.
    pub folded: Vec<Fold<'a>>,
    /// The queue's `meta`.
    pub meta: Key<'a, 'a>,
    /// The structure the jobs go to (pending, schedule).
    pub structure: Key<'a, 'a>,
    /// The queue's `wake`.
    pub wake: Key<'a, 'a>,
    /// `meta`'s `enqueued` counter now.
    enqueued: i64,
    /// When a job carries a key: the deduplication keys, and the keys admitted jobs take.
    dedup: Option<(Dedup<'a>, Vec<Take>)>,
    debounced: Vec<Debounce<'a>>,
    /// The server's time the plan was made at.
    pub now: i64,
    /// Each job's lane and priority (its options; the default lane at 0 when none), by place.
    pub places: Vec<Place>,
    /// Whether this admission makes the queue laned (the first job carrying a lane).
    pub laning: bool,
    /// An admission into pending (ENQUEUE, TICK): the plan of its ready pushes.
    pub ready: Option<Plan<'a>>,
    /// Whether the queue had no ready job (its `ready` marker goes on wake with the first).
    pub idle: bool,
    /// The queue's events.
    pub events: Events<'a>,
}

/// A key an admitted job takes: its place, the key, the window's end (0: none).
struct Take {
    place: usize,
    key: Vec<u8>,
    until: i64,
}

impl<'a> Admission<'a> {
    /// The ids admitted, in call order.
    pub fn admitted_ids(&self) -> Vec<Str<'a>> {
        self.admitted.iter().map(|&j| self.ids[j]).collect()
    }

    /// The admission's events, after its writes: `ty` (`enqueued`, `scheduled`, or TICK's
    /// `scheduler` with its `name`) naming the jobs admitted, when any, then `deduplicated` naming
    /// the ids not admitted and (`into`, parallel) the jobs they folded into, when any.
    pub fn announce(&self, ty: Str, name: Option<Str>) {
        let events = &self.events;
        if !events.on() {
            return;
        }
        if let Some(jobs) = events.list(self.admitted.iter().map(|&j| self.ids[j].bytes())) {
            let entry = Fields {
                name,
                jobs: Some(jobs.as_str()),
                ..blank()
            };
            events.add(ty, &entry);
        }
        let folded = events.list(self.folded.iter().map(|f| self.ids[f.place].bytes()));
        let into = events.list(self.folded.iter().map(|f| f.holder.bytes()));
        if let (Some(jobs), Some(into)) = (folded, into) {
            let entry = Fields {
                jobs: Some(jobs.as_str()),
                into: Some(into.as_str()),
                ..blank()
            };
            events.add(lit().event.deduplicated, &entry);
        }
    }

    /// The reply: the count admitted, or — when a job carried a key — `[admitted, (place, holder,
    /// outcome)…]`.
    pub fn reply(self) -> Reply<'a> {
        let admitted = self.admitted.len() as i64;
        match self.dedup {
            None => Reply::Int(admitted),
            Some(_) => Reply::Admitted {
                admitted,
                folded: self.folded,
            },
        }
    }
}

/// Checks an admission of `args`' jobs into the queue's structure of type `structure` (`kind`);
/// `opts`: the place of the options argument in a group (ENQUEUE, SCHEDULE): [`start`], then
/// [`plan`] with each job's options.
pub fn admit<'a>(
    s: &mut Scope<'a>,
    args: &Args<'a>,
    structure: &[u8],
    kind: Kind,
    opts: usize,
) -> Result<Admission<'a>, Refusal> {
    let a = start(s, args, structure, kind)?;
    let options: Vec<Options> = (0..a.ids.len())
        .map(|j| args.job_options(j, opts))
        .collect();
    plan(s, a, kind, &options)
}

/// The first checks of an admission, which no job's options change: no id twice, no row already
/// there, the types of meta, of the structure written, of wake and of events, meta's `enqueued`
/// counter. TICK calls it apart, then reads its scheduler's options for [`plan`].
pub fn start<'a>(
    s: &mut Scope<'a>,
    args: &Args<'a>,
    structure: &[u8],
    kind: Kind,
) -> Result<Admission<'a>, Refusal> {
    let ids = args.ids();
    once(&ids)?;
    let mut rows = Vec::with_capacity(ids.len());
    for id in &ids {
        let name = s.row(id.bytes());
        if s.open(name.as_str())?.kind() != Kind::Empty {
            return Err(Refusal::Duplicate(id.bytes().to_vec()));
        }
        s.absent(name.as_str());
        rows.push(name);
    }
    let meta = s.meta()?;
    let structure = s.structure(structure, kind)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    let events = Events::open(s, &meta)?;
    let enqueued = counter(&meta, lit().meta.enqueued)?;
    let now = crate::ffi::now_ms();
    Ok(Admission {
        admitted: Vec::with_capacity(ids.len()),
        source: (0..ids.len()).collect(),
        folded: Vec::new(),
        ids,
        rows,
        meta,
        structure,
        wake,
        enqueued,
        dedup: None,
        debounced: Vec::new(),
        now,
        places: Vec::new(),
        laning: false,
        ready: None,
        idle: false,
        events,
    })
}

/// The rest of an admission's checks once each job's options are known (`options`, by place; empty:
/// none): each job's lane and priority, and, when a job carries a `dedup` key, who holds each key.
pub fn plan<'a>(
    s: &mut Scope<'a>,
    mut a: Admission<'a>,
    kind: Kind,
    options: &[Options],
) -> Result<Admission<'a>, Refusal> {
    let now = a.now;
    if options.is_empty() {
        a.admitted = (0..a.ids.len()).collect();
        return finish(s, a, kind, Vec::new());
    }
    let places: Vec<Place> = options
        .iter()
        .map(|o| {
            let lane = o.bytes("lane").unwrap_or_default().to_vec();
            (lane, o.number("priority").unwrap_or(0) as u64)
        })
        .collect();
    if options.iter().all(|o| o.bytes("dedup").is_none()) {
        a.admitted = (0..a.ids.len()).collect();
        return finish(s, a, kind, places);
    }
    let d = dedup::open(s)?;
    let mut takes: Vec<Take> = Vec::new();
    for (j, o) in options.iter().enumerate() {
        let Some(key) = o.bytes("dedup") else {
            a.admitted.push(j);
            continue;
        };
        let debounce = o.number("debounce") == Some(1);
        // a key taken earlier in this call is held by that job, which waits
        if let Some(t) = takes.iter().find(|t| t.key == key) {
            let holder = s.ctx.string(a.ids[t.place].bytes());
            if debounce {
                a.source[t.place] = j;
            }
            a.folded.push(Fold {
                place: j,
                holder,
                debounced: debounce,
            });
            continue;
        }
        match dedup::holder(s, &d, key, now)? {
            // a debounced admission while the holder runs: the edit must run too, so it is a new job
            Some(h) if !(debounce && h.active) => {
                let debounced = debounce && h.waiting;
                a.folded.push(Fold {
                    place: j,
                    holder: s.ctx.string(h.id.bytes()),
                    debounced,
                });
                if debounced {
                    a.debounced.retain(|b| b.holder.id.bytes() != h.id.bytes());
                    a.debounced.push(Debounce { holder: h, from: j });
                }
            }
            _ => {
                let until = o.number("dedup_ms").map_or(0, |ms| now + ms);
                takes.push(Take {
                    place: j,
                    key: key.to_vec(),
                    until,
                });
                a.admitted.push(j);
            }
        }
    }
    a.dedup = Some((d, takes));
    finish(s, a, kind, places)
}

/// The end of [`admit`]: each job's place; whether the admission makes the queue laned (then the
/// keys of the transition typed: `pending`, and the default lane's, [`laning`]); and for an
/// admission into pending (a list) whether the queue had no ready job and the plan of its ready
/// pushes.
fn finish<'a>(
    s: &mut Scope<'a>,
    mut a: Admission<'a>,
    kind: Kind,
    mut places: Vec<Place>,
) -> Result<Admission<'a>, Refusal> {
    places.resize(a.ids.len(), (Vec::new(), 0));
    a.places = places;
    a.laning =
        a.admitted.iter().any(|&j| !a.places[j].0.is_empty()) && lanes::laned(&a.meta).is_none();
    if a.laning {
        s.structure(PENDING, Kind::List)?;
        counter(&a.meta, lit().meta.prioritized)?;
        lanes::check(s, [&b""[..]], false)?;
    }
    if kind == Kind::List {
        a.idle = !ready::any(s, &a.meta);
        let ids = a.admitted_ids();
        let places = &a.places;
        let admitted = &a.admitted;
        a.ready = Some(ready::plan(s, &a.meta, &ids, |k| {
            places[admitted[k]].clone()
        })?);
    }
    Ok(a)
}

/// Step 6 of the admission that makes the queue laned, before its pushes (§10.1): `meta`'s `laned`
/// is its `tokens` (0 when absent), and the ready jobs it had, all of the default lane, are that
/// lane's score, with its insert check.
pub fn laning(s: &Scope, meta: &Key, wake: &Key) {
    let l = lit();
    let tokens = meta.hget(l.meta.tokens);
    meta.hset(&[(l.meta.laned, tokens.as_ref().map_or(l.zero, |t| t.as_str()))]);
    let pending = s.ctx.open_named(s.name(PENDING));
    let waiting = if pending.kind() == Kind::List {
        pending.value_len() as i64
    } else {
        0
    };
    let ready = waiting + counter(meta, l.meta.prioritized).unwrap_or(0);
    if ready > 0 {
        let live = Live::open(s, meta);
        live.add_ready(l.empty, ready);
        live.insert(l.empty);
        if live.filled() {
            mark_ready(wake);
        }
    }
}

/// Step 6, first: `meta` made (and laned: [`laning`]) and counted; the keys taken; each debounced holder outside the call
/// given its new payload (`payload` of the place it takes it from) and, from SCHEDULE (`due_at`), its new due
/// time when scheduled. Returns the earliest due time written to a holder (0: none).
pub fn admitted<'b>(
    s: &Scope,
    a: &Admission,
    args: &Args,
    now: Str,
    payload: impl Fn(usize) -> Str<'b>,
    due_at: Option<usize>,
) -> i64 {
    let (ctx, l) = (a.meta.ctx(), lit());
    made(&a.meta, now);
    if a.laning {
        laning(s, &a.meta, &a.wake);
    }
    add(
        &a.meta,
        l.meta.enqueued,
        a.enqueued,
        a.admitted.len() as i64,
    );
    let Some((d, takes)) = &a.dedup else {
        return 0;
    };
    for t in takes {
        dedup::take(ctx, d, &t.key, a.ids[t.place], t.until);
    }
    if !takes.is_empty() {
        let one = ctx.int(1);
        a.meta.hset(&[(l.meta.dedup, one.as_str())]);
    }
    let mut earliest = 0;
    for b in &a.debounced {
        let row = &b.holder.row;
        // `hset` replicates itself; the sorted set's write is replicated here
        ctx.open(row.as_str())
            .hset(&[(l.row.payload, payload(b.from))]);
        let due = due_at
            .filter(|_| b.holder.scheduled)
            .map(|k| args.job_number(b.from, k));
        let Some(due) = due else {
            continue;
        };
        let due_s = ctx.int(due);
        ctx.open(row.as_str())
            .hset(&[(l.row.due_ms, due_s.as_str())]);
        a.structure.zadd(due as f64, b.holder.id.as_str());
        let zadd = [a.structure.name(), due_s.as_str(), b.holder.id.as_str()];
        ctx.replicate(c"ZADD", &zadd);
        earliest = if earliest == 0 {
            due
        } else {
            earliest.min(due)
        };
    }
    earliest
}

/// The fields of an admitted job's row besides its state and counters: the payload of its source,
/// and its options when given (group argument `opts_at`).
pub fn fields<'b>(
    a: &Admission,
    args: &Args<'b>,
    j: usize,
    payload_at: usize,
    opts_at: usize,
) -> Vec<(Str<'b>, Str<'b>)> {
    let l = lit();
    let mut out = vec![(l.row.payload, args.job_bytes(a.source[j], payload_at))];
    let opts = args.job_bytes(j, opts_at);
    if !opts.bytes().is_empty() {
        out.push((l.row.opts, opts));
    }
    out
}

/// Replies `[admitted, place, holder, outcome, …]` (`Reply::Admitted`).
pub fn answer(ctx: Ctx, admitted: i64, folded: &[Fold]) {
    let l = lit();
    ctx.reply_array(1 + 3 * folded.len());
    ctx.reply_int(admitted);
    for f in folded {
        ctx.reply_int(f.place as i64);
        ctx.reply_str(f.holder.as_str());
        ctx.reply_str(if f.debounced {
            l.debounced
        } else {
            l.deduplicated
        });
    }
}
