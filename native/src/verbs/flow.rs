//! `EMQ.FLOW 1 <meta> <parent> <parent_opts> <payload> <open> <within_ms> (<id> <queue> <policy> <opts> <body>)…`: a
//! parent that waits for its children (state `waiting`, in `waiting` scored by its flow deadline, its fan-in state on its row: `children`,
//! `finished`, `child:<i>`, and `open` while more may come); each child in this queue is made at
//! once (pending, naming its parent), each child in another queue is a `child` entry of this
//! queue's outbox, which a relay applies there (docs/design/flows.md); a `waiting` event names the
//! parent, then an `enqueued` event the children made here. Reply: the children made here. [`Children`] is the part ADOPT shares.

use super::events::Events;
use super::flow_opts;
use super::flows::{join, subtree, CHILD, CHILD_FIELD, NESTED, NODE};
use super::ready::{self, Plan};
use super::scope::Scope;
use super::{add, counter, made, mark_ready, once};
use crate::command::{Args, Reply};
use crate::ffi::{Key, Kind, Owned, Str};
use crate::keyspace::{OUTBOX, PENDING, WAITING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// A child's options in its group.
const OPTS: usize = 3;
/// A child's body in its group.
const BODY: usize = 4;

/// Runs FLOW's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let (parent, opts, payload) = (args.bytes(0), args.bytes(1), args.bytes(2));
    let (open, within_ms) = (args.number(3) == 1, args.number(4));
    let mut all = vec![parent];
    all.extend_from_slice(&args.ids());
    once(&all)?;
    Children::forms(args)?;
    let row = s.row(parent.bytes());
    if s.open(row.as_str())?.kind() != Kind::Empty {
        return Err(Refusal::Duplicate(parent.bytes().to_vec()));
    }
    s.absent(row.as_str());
    let kids = Children::check(s, args)?;
    let waiting = s.structure(WAITING, Kind::Zset)?;
    let kids = kids.plan(s, args, Some(opts.bytes()))?;
    let events = Events::open(s, &kids.meta)?;
    s.probe()?;

    let at = ctx.int(s.now());
    made(&kids.meta, at.as_str());
    kids.laned(s);
    let count = ctx.int(args.jobs() as i64);
    let mut pairs = vec![
        (l.row.state, l.state.waiting),
        (l.row.payload, payload),
        (l.row.attempts, l.zero),
        (l.row.created_ms, at.as_str()),
        (l.row.children, count.as_str()),
        (l.row.finished, l.zero),
    ];
    let one = ctx.int(1);
    if open {
        pairs.push((l.row.open, one.as_str()));
    }
    let key = ctx.open(row.as_str());
    key.hset(&pairs);
    flow_opts::write(s, &key, opts.bytes());
    // scored by its flow deadline (none: after every time)
    let until = if within_ms > 0 {
        s.now() + within_ms
    } else {
        crate::spec::WAITING_FOREVER
    };
    let score = ctx.int(until);
    waiting.zadd(until as f64, parent);
    ctx.replicate(c"ZADD", &[waiting.name(), score.as_str(), parent]);
    let made_here = kids.write(s, args, &key, parent, 0, 1);
    // the parent first, then its children (BullMQ's order: a flow's parent is added first)
    events.jobs(l.event.waiting, [parent.bytes()]);
    events.jobs(l.event.enqueued, kids.made(args));
    Ok(Reply::Int(made_here))
}

/// The children of a FLOW or an ADOPT call, checked (step 5): which are in this queue, their rows
/// (missing), then the keys and the ready plan their writes need.
pub struct Children<'a> {
    here: Vec<usize>,
    rows: Vec<Owned<'a>>,
}

/// [`Children`] with the keys and the plan step 6 writes with.
pub struct Planned<'a> {
    /// Whether these writes make the queue laned (the parent or a child here the first with a lane).
    laning: bool,
    here: Vec<usize>,
    rows: Vec<Owned<'a>>,
    meta: Key<'a, 'a>,
    pending: Key<'a, 'a>,
    outbox: Key<'a, 'a>,
    enqueued: i64,
    plan: Plan<'a>,
}

impl<'a> Children<'a> {
    /// Step 5: each child with children (policy ≥ 4) must carry a well-formed subtree (else
    /// `entry-form`); then each other child of this queue must have no row (else `duplicate`, the
    /// first such id). A child with children is never made here: it travels through the outbox.
    pub fn forms(args: &Args<'a>) -> Result<(), Refusal> {
        let depth = crate::spec::MAX_FLOW_DEPTH - 1;
        let bad = (0..args.jobs())
            .any(|j| args.job_number(j, 2) >= NESTED && subtree(args.job_bytes(j, BODY).bytes(), depth).is_none());
        if bad {
            return Err(Refusal::EntryForm);
        }
        Ok(())
    }

    /// Step 5: each child of this queue without children must have no row (else `duplicate`, the
    /// first such id).
    pub fn check(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Children<'a>, Refusal> {
        let queue = s.queue();
        let children = args.ids();
        let here: Vec<usize> = (0..args.jobs())
            .filter(|&j| args.job_bytes(j, 1).bytes() == queue && args.job_number(j, 2) < NESTED)
            .collect();
        let mut rows = Vec::with_capacity(here.len());
        for &j in &here {
            let row = s.row(children[j].bytes());
            if s.open(row.as_str())?.kind() != Kind::Empty {
                return Err(Refusal::Duplicate(children[j].bytes().to_vec()));
            }
            s.absent(row.as_str());
            rows.push(row);
        }
        Ok(Children { here, rows })
    }

    /// Step 5: the queue's keys the children's writes need (`pending`, `wake`, `outbox`, after
    /// `waiting`, which the caller opened), `enqueued`, the laning when the parent (`parent`: its
    /// options, FLOW's) or a child here is the first job with a lane, and the ready plan of the
    /// children here, each in its lane at its priority.
    pub fn plan(self, s: &mut Scope<'a>, args: &Args<'a>, parent: Option<&[u8]>) -> Result<Planned<'a>, Refusal> {
        let ids: Vec<Str> = self.here.iter().map(|&j| args.job_bytes(j, 0)).collect();
        let meta = s.meta()?;
        let pending = s.structure(PENDING, Kind::List)?;
        s.structure(WAKE, Kind::Zset)?;
        let outbox = s.structure(OUTBOX, Kind::Zset)?;
        let enqueued = counter(&meta, lit().meta.enqueued)?;
        let places: Vec<_> = self
            .here
            .iter()
            .map(|&j| flow_opts::place(args.job_bytes(j, OPTS).bytes()))
            .chain(parent.map(flow_opts::place))
            .collect();
        let laning = flow_opts::laning(&meta, places.iter());
        if laning {
            flow_opts::check_laning(s, &meta)?;
        }
        let mut plan = ready::plan(s, &meta, &ids, |k| places[k].clone())?;
        // the parent's lane alone lanes the queue: the children's pushes are then a laned queue's
        plan.laned |= laning;
        Ok(Planned {
            laning,
            here: self.here,
            rows: self.rows,
            meta,
            pending,
            outbox,
            enqueued,
            plan,
        })
    }
}

impl Planned<'_> {
    /// The ids of the children made here (their `enqueued` event).
    pub fn made<'b>(&self, args: &Args<'b>) -> Vec<&'b [u8]> {
        self.here.iter().map(|&j| args.job_bytes(j, 0).bytes()).collect()
    }

    /// Step 6, first: the queue made laned when [`Children::plan`] found it must be.
    pub fn laned(&self, s: &Scope) {
        if self.laning {
            flow_opts::laned(s, &self.meta);
        }
    }

    /// Step 6: the children of parent `parent` (its row `key`) at places `from`, `from + 1`, …:
    /// `enqueued` + the children here (and `extra`: the parent, for FLOW), each one's `child:<i>`
    /// field on the parent's row, each child here made (pending, naming its parent: the head of the
    /// default lane's ready list), each child elsewhere a `child` entry of the outbox. The children
    /// made here.
    pub fn write(&self, s: &Scope, args: &Args, key: &Key, parent: Str, from: usize, extra: i64) -> i64 {
        let (ctx, l) = (s.ctx, lit());
        let (queue, n) = (s.queue(), args.jobs());
        let children = args.ids();
        let at = ctx.int(s.now());
        add(&self.meta, l.meta.enqueued, self.enqueued, extra + self.here.len() as i64);
        let mut fields: Vec<(Owned, Owned)> = Vec::with_capacity(n);
        for (j, child) in children.iter().enumerate() {
            let field = ctx.string(&[CHILD_FIELD, (from + j).to_string().as_bytes()].concat());
            let edge = join(&[
                args.job_bytes(j, 1).bytes(),
                child.bytes(),
                (args.job_number(j, 2) % NESTED).to_string().as_bytes(),
            ]);
            fields.push((field, ctx.string(&edge)));
        }
        let pairs: Vec<(Str, Str)> = fields.iter().map(|(f, v)| (f.as_str(), v.as_str())).collect();
        key.hset(&pairs);
        if !self.here.is_empty() {
            let was_empty = !ready::any(s, &self.meta);
            for (k, &j) in self.here.iter().enumerate() {
                let named = join(&[queue, parent.bytes(), (from + j).to_string().as_bytes()]);
                let named = ctx.string(&named);
                let row = ctx.open(self.rows[k].as_str());
                row.hset(&[
                    (l.row.state, l.state.pending),
                    (l.row.payload, args.job_bytes(j, BODY)),
                    (l.row.attempts, l.zero),
                    (l.row.created_ms, at.as_str()),
                    (l.row.parent, named.as_str()),
                ]);
                flow_opts::write(s, &row, args.job_bytes(j, OPTS).bytes());
            }
            ready::push(s, &self.meta, &self.pending, &self.plan, false);
            if was_empty {
                // (a fresh handle: the laning may have made `wake` since step 5 opened it)
                mark_ready(&ctx.open_named(s.name(WAKE)));
            }
            ctx.signal_ready(self.pending.name());
        }
        for j in (0..n).filter(|j| !self.here.contains(j)) {
            let kind = if args.job_number(j, 2) >= NESTED { NODE } else { CHILD };
            let entry = join(&[
                kind,
                args.job_bytes(j, 1).bytes(),
                children[j].bytes(),
                queue,
                parent.bytes(),
                (from + j).to_string().as_bytes(),
                &[&flow_opts::prefixed(args.job_bytes(j, OPTS).bytes())[..], args.job_bytes(j, BODY).bytes()].concat(),
            ]);
            let entry = ctx.string(&entry);
            self.outbox.zadd(s.now() as f64, entry.as_str());
            ctx.replicate(c"ZADD", &[self.outbox.name(), at.as_str(), entry.as_str()]);
        }
        self.here.len() as i64
    }
}
