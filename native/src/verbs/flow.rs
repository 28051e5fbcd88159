//! `EMQ.FLOW 1 <meta> <parent> <payload> (<id> <queue> <policy> <body>)…`: a parent that waits
//! for its children (state `waiting`, in `waiting`, its fan-in state on its row: `children`,
//! `finished`, `child:<i>`); each child in this queue is made at once (pending, naming its
//! parent), each child in another queue is a `child` entry of this queue's outbox, which a relay
//! applies there (docs/design/flows.md). Reply: the children made here.

use super::flows::{join, CHILD, CHILD_FIELD};
use super::scope::Scope;
use super::{add, counter, made, mark_ready, once, ready};
use crate::command::{Args, Reply};
use crate::ffi::{Kind, Owned, Str};
use crate::keyspace::{OUTBOX, PENDING, WAITING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs FLOW's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let (parent, payload) = (args.bytes(0), args.bytes(1));
    let n = args.jobs();
    let children = args.ids();
    let mut all = vec![parent];
    all.extend_from_slice(&children);
    once(&all)?;
    let queue = s.queue();
    let here: Vec<usize> = (0..n).filter(|&j| args.job_bytes(j, 1).bytes() == queue).collect();
    let mut rows: Vec<Owned> = Vec::with_capacity(1 + here.len());
    for id in std::iter::once(parent).chain(here.iter().map(|&j| children[j])) {
        let row = s.row(id.bytes());
        if s.open(row.as_str())?.kind() != Kind::Empty {
            return Err(Refusal::Duplicate(id.bytes().to_vec()));
        }
        s.absent(row.as_str());
        rows.push(row);
    }
    let meta = s.meta()?;
    let pending = s.structure(PENDING, Kind::List)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    let waiting = s.structure(WAITING, Kind::Zset)?;
    let outbox = s.structure(OUTBOX, Kind::Zset)?;
    let enqueued = counter(&meta, l.meta.enqueued)?;
    let local: Vec<Str> = here.iter().map(|&j| children[j]).collect();
    let plan = ready::plan(s, &meta, &local, |_| (Vec::new(), 0))?;
    s.probe()?;

    let now = s.now();
    let at = ctx.int(now);
    made(&meta, at.as_str());
    add(&meta, l.meta.enqueued, enqueued, 1 + here.len() as i64);
    let count = ctx.int(n as i64);
    let mut fields: Vec<(Owned, Owned)> = Vec::with_capacity(n);
    for (j, child) in children.iter().enumerate() {
        let field = ctx.string(&[CHILD_FIELD, j.to_string().as_bytes()].concat());
        let edge = join(&[
            args.job_bytes(j, 1).bytes(),
            child.bytes(),
            args.job_number(j, 2).to_string().as_bytes(),
        ]);
        fields.push((field, ctx.string(&edge)));
    }
    let mut pairs = vec![
        (l.row.state, l.state.waiting),
        (l.row.payload, payload),
        (l.row.attempts, l.zero),
        (l.row.created_ms, at.as_str()),
        (l.row.children, count.as_str()),
        (l.row.finished, l.zero),
    ];
    pairs.extend(fields.iter().map(|(f, v)| (f.as_str(), v.as_str())));
    ctx.open(rows[0].as_str()).hset(&pairs);
    waiting.zadd(now as f64, parent);
    ctx.replicate(c"ZADD", &[waiting.name(), at.as_str(), parent]);

    if !here.is_empty() {
        let was_empty = !ready::any(s, &meta);
        for (k, &j) in here.iter().enumerate() {
            let named = join(&[queue, parent.bytes(), j.to_string().as_bytes()]);
            let named = ctx.string(&named);
            ctx.open(rows[1 + k].as_str()).hset(&[
                (l.row.state, l.state.pending),
                (l.row.payload, args.job_bytes(j, 3)),
                (l.row.attempts, l.zero),
                (l.row.created_ms, at.as_str()),
                (l.row.parent, named.as_str()),
            ]);
        }
        ready::push(s, &meta, &pending, &plan, false);
        if was_empty {
            mark_ready(&wake);
        }
        ctx.signal_ready(pending.name());
    }
    for j in (0..n).filter(|j| !here.contains(j)) {
        let entry = join(&[
            CHILD,
            args.job_bytes(j, 1).bytes(),
            children[j].bytes(),
            queue,
            parent.bytes(),
            j.to_string().as_bytes(),
            args.job_bytes(j, 3).bytes(),
        ]);
        let entry = ctx.string(&entry);
        outbox.zadd(now as f64, entry.as_str());
        ctx.replicate(c"ZADD", &[outbox.name(), at.as_str(), entry.as_str()]);
    }
    Ok(Reply::Int(here.len() as i64))
}
