//! `EMQ.APPLY 1 <meta> (<entry>)…`: a relay applies entries of other queues' outboxes in this
//! queue (each entry must name it), in order and idempotently: `child` makes the child unless its
//! row exists; `done` records a child's outcome on its parent unless recorded (`flows::record`);
//! `cancel` cancels a child that has not started, or leaves a tombstone when it is not made yet;
//! `node` makes a child with children (a waiting parent, and its children) unless its row exists.
//! Reply: the entries that changed something.

use super::flows::{self, Entry};
use super::scope::Scope;
use super::counter;
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::keyspace::{DEAD, EVENTS, PENDING, WAITING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs APPLY's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    applied(s, args, true)
}

/// APPLY's steps 5–6 (`creations`: `child` and `node` entries taken; TELL's: refused, `entry-form`).
pub fn applied<'a>(s: &mut Scope<'a>, args: &Args<'a>, creations: bool) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let queue = s.queue();
    let meta = s.meta()?;
    s.structure(PENDING, Kind::List)?;
    s.structure(WAKE, Kind::Zset)?;
    s.structure(WAITING, Kind::Zset)?;
    s.structure(DEAD, Kind::Zset)?;
    // a parent made ready or buried writes `ready` or `dead`
    s.structure(EVENTS, Kind::Stream)?;
    let mut entries = Vec::with_capacity(args.jobs());
    for j in 0..args.jobs() {
        let e = flows::parse(args.job_bytes(j, 0).bytes(), queue).ok_or(Refusal::EntryForm)?;
        if !creations && matches!(e, Entry::Child { .. } | Entry::Node { .. }) {
            return Err(Refusal::EntryForm);
        }
        entries.push(e);
    }
    counter(&meta, l.meta.enqueued)?;
    counter(&meta, l.meta.buried)?;
    for e in &entries {
        let id = match e {
            Entry::Child { id, .. } | Entry::Cancel { id, .. } | Entry::Node { id, .. } => id,
            Entry::Done { parent, .. } => parent,
        };
        let row = s.row(id);
        s.expect(row.as_str(), Kind::Hash)?;
    }
    s.probe()?;

    let mut applied = 0;
    for e in &entries {
        let done = match e {
            Entry::Child { id, parent, opts, body } => {
                let row = s.row(id);
                ctx.open(row.as_str()).kind() == Kind::Empty && flows::make_child(s, id, parent, opts, body)
            }
            Entry::Node {
                id,
                parent,
                opts,
                payload,
                kids,
            } => {
                let row = s.row(id);
                ctx.open(row.as_str()).kind() == Kind::Empty && flows::make_node(s, id, parent, opts, payload, kids)
            }
            Entry::Cancel { id, parent } => flows::cancel(s, id, parent, true),
            Entry::Done {
                parent,
                index,
                child,
                state,
                detail,
            } => flows::record(s, parent, index, child, state, detail),
        };
        applied += i64::from(done);
    }
    Ok(Reply::Int(applied))
}
