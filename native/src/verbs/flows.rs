//! What the flow verbs share (the twin of `lib/lua/flows.ts`; docs/design/flows.md): outbox
//! entries (NUL-joined fields, the second the destination queue, the last free bytes), a child
//! made ready in its queue, a child's outcome recorded on its parent (`record`: once per child, by
//! its `done:<i>` field), and the settle hook (`settled`: ACK and BURY of a child record its
//! outcome on a parent in this queue, or write a `done` entry in this queue's outbox).

use super::events::{blank, Events, Fields};
use super::flow_opts;
use super::scope::Scope;
use super::{add, mark_ready, ready, unmark_ready};
use crate::ffi::{Key, Kind, Owned, Str};
use crate::gates;
use crate::keyspace::{valid_name, DEAD, OUTBOX, PENDING, WAITING, WAKE};
use crate::literals::lit;

/// An entry creating a child in its queue.
pub const CHILD: &[u8] = b"child";
/// An entry recording a child's outcome on its parent.
pub const DONE: &[u8] = b"done";
/// An entry cancelling a child (its parent failed or was removed).
pub const CANCEL: &[u8] = b"cancel";
/// An entry creating a child with children of its own (its last field: its subtree).
pub const NODE: &[u8] = b"node";
/// Added to a child's policy when its body is its subtree (it has children of its own).
pub const NESTED: i64 = 4;
/// A child's outcome: acked.
pub const COMPLETED: &[u8] = b"completed";
/// A child's outcome: buried.
pub const FAILED: &[u8] = b"failed";
/// A parent's field naming child i (`child:<i>`: `<queue>\0<id>\0<policy>`).
pub const CHILD_FIELD: &[u8] = b"child:";
/// A parent's field holding child i's outcome (`done:<i>`: `<state>\0<detail>`).
pub const DONE_FIELD: &[u8] = b"done:";
/// A child's outcome: completed with a result longer than `CHILD_RESULT_KEPT_BYTES` (its length kept).
pub const LARGE: &[u8] = b"large";
/// A child's outcome: failed under policy `remove` (counts as finished, its reason not kept).
pub const REMOVED: &[u8] = b"removed";
/// The policy that fails the parent at once.
pub const POLICY_FAIL: &[u8] = b"0";
/// The policy that records a failure as `removed`, without its reason.
pub const POLICY_REMOVE: &[u8] = b"2";
/// The policy that lets the parent run at once on a failure.
pub const POLICY_CONTINUE: &[u8] = b"3";

/// `fields` joined by NUL.
pub fn join(fields: &[&[u8]]) -> Vec<u8> {
    fields.join(&b"\0"[..])
}

/// The first `n` fields of `entry`, the last taking the rest (it may hold NUL); None when fewer.
pub fn split(entry: &[u8], n: usize) -> Option<Vec<&[u8]>> {
    let mut out = Vec::with_capacity(n);
    let mut rest = entry;
    for _ in 1..n {
        let at = rest.iter().position(|&b| b == 0)?;
        out.push(&rest[..at]);
        rest = &rest[at + 1..];
    }
    out.push(rest);
    Some(out)
}

/// A child's place under its parent as written: decimal, no leading zero, below the fan-in bound.
fn index(b: &[u8]) -> bool {
    gates::digits_up_to(b, 6)
        .is_some_and(|n| (n as i64) < crate::spec::MAX_FAN_IN && n.to_string().as_bytes() == b)
}

/// A child in a subtree: its id, queue, policy (0–7: ≥ [`NESTED`] when `body` is its own
/// subtree) and options (gated: `flow_opts`).
pub struct Kid<'e> {
    pub id: &'e [u8],
    pub queue: &'e [u8],
    pub policy: i64,
    pub opts: &'e [u8],
    pub body: &'e [u8],
}

/// A decimal of at most `most` digits, no leading zero, and the rest after its NUL.
pub fn number_then(b: &[u8], most: usize) -> Option<(usize, &[u8])> {
    let at = b.iter().position(|&c| c == 0)?;
    let n = gates::digits_up_to(&b[..at], most)?;
    (n.to_string().as_bytes() == &b[..at]).then_some((n as usize, &b[at + 1..]))
}

/// A subtree (`<n>\0<payload length>\0<payload>` then per child `<id>\0<queue>\0<policy>\0<opts
/// length>\0<opts><body length>\0<body>`) parsed: its payload and its children, each nested one checked the same way
/// with one level less; None when malformed, or nested deeper than `levels` levels of children.
pub fn subtree(body: &[u8], levels: i64) -> Option<(&[u8], Vec<Kid<'_>>)> {
    if levels < 1 {
        return None;
    }
    let (n, rest) = number_then(body, 5)?;
    let (len, rest) = number_then(rest, 7)?;
    if n == 0 || n > crate::spec::MAX_BATCH || rest.len() < len {
        return None;
    }
    let (payload, mut rest) = rest.split_at(len);
    let mut kids = Vec::with_capacity(n);
    for _ in 0..n {
        let f = split(rest, 4)?;
        let (id, queue) = (f[0], f[1]);
        let policy = gates::digits_up_to(f[2], 1)? as i64;
        let (opts, tail) = flow_opts::split(f[3])?;
        let (len, tail) = number_then(tail, 7)?;
        if !gates::job_id(id) || !valid_name(queue) || policy > 7 || tail.len() < len {
            return None;
        }
        let (body, tail) = tail.split_at(len);
        if policy >= NESTED && subtree(body, levels - 1).is_none() {
            return None;
        }
        kids.push(Kid {
            id,
            queue,
            policy,
            opts,
            body,
        });
        rest = tail;
    }
    rest.is_empty().then_some((payload, kids))
}

/// An entry APPLY takes, parsed.
pub enum Entry<'e> {
    /// Create child `id` (its row's `parent`: `parent`) with options `opts` and payload `body`.
    Child {
        id: &'e [u8],
        parent: Vec<u8>,
        opts: &'e [u8],
        body: &'e [u8],
    },
    /// Create child `id` (its row's `parent`: `parent`, its options `opts`) as a parent waiting for `kids`.
    Node {
        id: &'e [u8],
        parent: Vec<u8>,
        opts: &'e [u8],
        payload: &'e [u8],
        kids: Vec<Kid<'e>>,
    },
    /// Cancel child `id` (its row's `parent`: `parent`) unless it started: a tombstone when missing.
    Cancel { id: &'e [u8], parent: Vec<u8> },
    /// Record child `child`'s (place `index`) outcome `state` (`detail`) on parent `parent`.
    Done {
        parent: &'e [u8],
        index: &'e [u8],
        child: &'e [u8],
        state: &'e [u8],
        detail: &'e [u8],
    },
}

/// `entry` parsed, when it is one an outbox holds for queue `queue`.
pub fn parse<'e>(entry: &'e [u8], queue: &[u8]) -> Option<Entry<'e>> {
    let f = split(entry, 7)?;
    if f[1] != queue {
        return None;
    }
    if f[0] == CHILD || f[0] == CANCEL || f[0] == NODE {
        let ok = gates::job_id(f[2]) && valid_name(f[3]) && gates::job_id(f[4]) && index(f[5]);
        let parent = join(&[f[3], f[4], f[5]]);
        if f[0] == CANCEL {
            return (ok && f[6].is_empty()).then_some(Entry::Cancel { id: f[2], parent });
        }
        let (opts, body) = flow_opts::split(f[6])?;
        if f[0] == NODE {
            let (payload, kids) = subtree(body, crate::spec::MAX_FLOW_DEPTH - 1).filter(|_| ok)?;
            return Some(Entry::Node {
                id: f[2],
                parent,
                opts,
                payload,
                kids,
            });
        }
        return ok.then_some(Entry::Child {
            id: f[2],
            parent,
            opts,
            body,
        });
    }
    let ok = f[0] == DONE
        && gates::job_id(f[2])
        && index(f[3])
        && gates::job_id(f[4])
        && (f[5] == COMPLETED || f[5] == FAILED || f[5] == REMOVED);
    ok.then(|| Entry::Done {
        parent: f[2],
        index: f[3],
        child: f[4],
        state: f[5],
        detail: f[6],
    })
}

/// Step 6: child `id` made in this queue, pending, naming `parent` (its row must be missing), with
/// options `opts`: `enqueued` + 1 (the queue laned first when it is the first job with a lane), the
/// row, pushed on the head of its lane's ready list at its priority; `ready` on wake when the queue
/// had none; an `enqueued` event names it. False (nothing written) when a key it needs is of another type.
pub fn make_child(s: &Scope, id: &[u8], parent: &[u8], opts: &[u8], body: &[u8]) -> bool {
    let (ctx, l) = (s.ctx, lit());
    let mut f = s.fresh();
    let Ok(meta) = f.meta() else { return false };
    let (Ok(pending), Ok(_)) = (
        f.structure(PENDING, Kind::List),
        f.structure(WAKE, Kind::Zset),
    ) else {
        return false;
    };
    let Ok(enqueued) = super::counter(&meta, l.meta.enqueued) else {
        return false;
    };
    let id = ctx.string(id);
    let ids = [id.as_str()];
    let place = flow_opts::place(opts);
    let laning = flow_opts::laning(&meta, std::iter::once(&place));
    if laning && flow_opts::check_laning(&mut f, &meta).is_err() {
        return false;
    }
    let Ok(plan) = ready::plan(&mut f, &meta, &ids, |_| place.clone()) else {
        return false;
    };
    let now = ctx.int(f.now());
    super::made(&meta, now.as_str());
    if laning {
        flow_opts::laned(&f, &meta);
    }
    add(&meta, l.meta.enqueued, enqueued, 1);
    let was_empty = !ready::any(&f, &meta);
    let row = ctx.open_named(f.row(id.bytes()));
    let (parent, body) = (ctx.string(parent), ctx.string(body));
    row.hset(&[
        (l.row.state, l.state.pending),
        (l.row.payload, body.as_str()),
        (l.row.attempts, l.zero),
        (l.row.created_ms, now.as_str()),
        (l.row.parent, parent.as_str()),
    ]);
    flow_opts::write(&f, &row, opts);
    ready::push(&f, &meta, &pending, &plan, false);
    if was_empty {
        mark_ready(&ctx.open_named(f.name(WAKE)));
    }
    ctx.signal_ready(pending.name());
    // no event when the stream is of another type (a hand-edited key): the child stands
    if let Ok(events) = Events::open(&mut f, &meta) {
        events.jobs(l.event.enqueued, [id.as_str().bytes()]);
    }
    true
}

/// Step 6: child `id` made in this queue as a parent waiting for `kids` (its row must be missing),
/// naming `parent`, with options `opts`: `enqueued` + 1 (the queue laned first when it is the first
/// job with a lane), the row (as FLOW's parent, with `parent`), in `waiting` (no deadline); each leaf child of this queue made at once ([`make_child`]), each other child an
/// entry of this queue's outbox (`node` for a child with children, even to this queue). False
/// (nothing written) when a key it needs is of another type.
pub fn make_node(
    s: &Scope,
    id: &[u8],
    parent: &[u8],
    opts: &[u8],
    payload: &[u8],
    kids: &[Kid],
) -> bool {
    let (ctx, l) = (s.ctx, lit());
    let mut f = s.fresh();
    let (Ok(meta), Ok(waiting), Ok(outbox)) = (
        f.meta(),
        f.structure(WAITING, Kind::Zset),
        f.structure(OUTBOX, Kind::Zset),
    ) else {
        return false;
    };
    let Ok(enqueued) = super::counter(&meta, l.meta.enqueued) else {
        return false;
    };
    let laning = flow_opts::laning(&meta, std::iter::once(&flow_opts::place(opts)));
    if laning && flow_opts::check_laning(&mut f, &meta).is_err() {
        return false;
    }
    let (queue, now) = (s.queue(), ctx.int(f.now()));
    super::made(&meta, now.as_str());
    if laning {
        flow_opts::laned(&f, &meta);
    }
    add(&meta, l.meta.enqueued, enqueued, 1);
    let row = ctx.open_named(f.row(id));
    let (count, parent, payload) = (
        ctx.int(kids.len() as i64),
        ctx.string(parent),
        ctx.string(payload),
    );
    let mut fields: Vec<(Owned, Owned)> = Vec::with_capacity(kids.len());
    for (i, k) in kids.iter().enumerate() {
        let policy = (k.policy % NESTED).to_string();
        fields.push((
            ctx.string(&[CHILD_FIELD, i.to_string().as_bytes()].concat()),
            ctx.string(&join(&[k.queue, k.id, policy.as_bytes()])),
        ));
    }
    let mut pairs = vec![
        (l.row.state, l.state.waiting),
        (l.row.payload, payload.as_str()),
        (l.row.attempts, l.zero),
        (l.row.created_ms, now.as_str()),
        (l.row.children, count.as_str()),
        (l.row.finished, l.zero),
        (l.row.parent, parent.as_str()),
    ];
    pairs.extend(fields.iter().map(|(f, v)| (f.as_str(), v.as_str())));
    row.hset(&pairs);
    flow_opts::write(&f, &row, opts);
    let id = ctx.string(id);
    let forever = ctx.int(crate::spec::WAITING_FOREVER);
    waiting.zadd(crate::spec::WAITING_FOREVER as f64, id.as_str());
    ctx.replicate(c"ZADD", &[waiting.name(), forever.as_str(), id.as_str()]);
    // its event before its children's (no event when the stream is of another type, a
    // hand-edited key: the node stands)
    if let Ok(events) = Events::open(&mut f, &meta) {
        events.jobs(l.event.waiting, [id.as_str().bytes()]);
    }
    for (i, k) in kids.iter().enumerate() {
        let place = i.to_string();
        if k.policy < NESTED && k.queue == queue {
            let named = join(&[queue, id.bytes(), place.as_bytes()]);
            if ctx.open_named(f.row(k.id)).kind() == Kind::Empty {
                make_child(s, k.id, &named, k.opts, k.body);
            }
            continue;
        }
        let kind = if k.policy >= NESTED { NODE } else { CHILD };
        let entry = join(&[
            kind,
            k.queue,
            k.id,
            queue,
            id.bytes(),
            place.as_bytes(),
            &[&flow_opts::prefixed(k.opts)[..], k.body].concat(),
        ]);
        let entry = ctx.string(&entry);
        outbox.zadd(f.now() as f64, entry.as_str());
        ctx.replicate(c"ZADD", &[outbox.name(), now.as_str(), entry.as_str()]);
    }
    true
}

/// Step 6: child `child`'s (place `index`) outcome `state` (`detail`) recorded on parent `parent`
/// of this queue, once: nothing when its row is gone, names another child there, or already
/// holds the outcome (a failure of policy 2 as `removed`, without its reason; a result longer than
/// `CHILD_RESULT_KEPT_BYTES` as `large` with its length). Then, while the
/// parent waits: a failure of policy 0 buries it; a failure of policy 3, or the last outcome, makes
/// it ready. Whether it recorded.
pub fn record(
    s: &Scope,
    parent: &[u8],
    index: &[u8],
    child: &[u8],
    state: &[u8],
    detail: &[u8],
) -> bool {
    let (ctx, l) = (s.ctx, lit());
    let row = ctx.open_named(s.row(parent));
    if row.kind() != Kind::Hash {
        return false;
    }
    let edge_field = ctx.string(&[CHILD_FIELD, index].concat());
    let Some(edge) = row.hget(edge_field.as_str()) else {
        return false;
    };
    let Some(edge) = split(edge.bytes(), 3).map(|e| (e[1].to_vec(), e[2].to_vec())) else {
        return false;
    };
    let done_field = ctx.string(&[DONE_FIELD, index].concat());
    if edge.0 != child || row.hget(done_field.as_str()).is_some() {
        return false;
    }
    let number = |f: Str| {
        row.hget(f)
            .and_then(|v| gates::bounded_counter(v.bytes()))
            .unwrap_or(0)
    };
    let finished = number(l.row.finished) + 1;
    let children = number(l.row.children);
    let waits = row
        .hget(l.row.state)
        .is_some_and(|v| v.bytes() == l.state.waiting.bytes());
    let failed = state == FAILED;
    let outcome = if failed && edge.1 == POLICY_REMOVE {
        ctx.string(&join(&[REMOVED, b""]))
    } else if detail.len() as i64 > crate::spec::CHILD_RESULT_KEPT_BYTES {
        // a result too long to keep on the parent: its length only
        ctx.string(&join(&[LARGE, detail.len().to_string().as_bytes()]))
    } else {
        ctx.string(&join(&[state, detail]))
    };
    let count = ctx.int(finished);
    row.hset(&[
        (done_field.as_str(), outcome.as_str()),
        (l.row.finished, count.as_str()),
    ]);
    if !waits {
        return true;
    }
    let id = ctx.string(parent);
    if failed && edge.1 == POLICY_FAIL {
        let reason = failed_reason(&row, index, child, detail);
        if bury(s, &row, id.as_str(), &reason) {
            cancel_unfinished(s, &row, parent, true);
        }
    } else if (finished >= children && row.hget(l.row.open).is_none())
        || (failed && edge.1 == POLICY_CONTINUE)
    {
        wake(s, &row, id.as_str());
    }
    true
}

/// Step 6: the children of parent `parent` (its row `row`) that have not finished are cancelled:
/// one of this queue at once when `here` ([`cancel`]; a tombstone when its row is missing: a child
/// with children may still be in the outbox; DROP passes false: it deletes them itself), one of
/// another queue by a `cancel` entry of this queue's outbox.
pub fn cancel_unfinished(s: &Scope, row: &Key, parent: &[u8], here: bool) {
    let (ctx, l) = (s.ctx, lit());
    let queue = s.queue();
    let n = row
        .hget(l.row.children)
        .and_then(|v| gates::bounded_counter(v.bytes()))
        .unwrap_or(0);
    for i in 0..n {
        let place = i.to_string();
        let done = ctx.string(&[DONE_FIELD, place.as_bytes()].concat());
        if row.hget(done.as_str()).is_some() {
            continue;
        }
        let field = ctx.string(&[CHILD_FIELD, place.as_bytes()].concat());
        let Some(edge) = row.hget(field.as_str()) else {
            continue;
        };
        let Some(e) = split(edge.bytes(), 3) else {
            continue;
        };
        if e[0] == queue {
            // a tombstone when missing: a child with children travels through the outbox
            if here {
                cancel(s, e[1], &join(&[queue, parent, place.as_bytes()]), true);
            }
            continue;
        }
        let outbox = ctx.open_named(s.name(OUTBOX));
        if !outbox.is_empty_or(Kind::Zset) {
            return;
        }
        let entry = join(&[CANCEL, e[0], e[1], queue, parent, place.as_bytes(), b""]);
        let entry = ctx.string(&entry);
        let now = s.now();
        outbox.zadd(now as f64, entry.as_str());
        let score = ctx.int(now);
        ctx.replicate(c"ZADD", &[outbox.name(), score.as_str(), entry.as_str()]);
    }
}

/// Step 6: a tombstone at `row` (a child of `parent`): state `cancelled`, expiring after
/// `TOMBSTONE_MS`, so that a late creation of the child (a second delivery of its entry) finds a
/// row and makes nothing.
pub fn leave_tombstone(s: &Scope, row: &Key, parent: Str) {
    let l = lit();
    row.hset(&[(l.row.state, l.state.cancelled), (l.row.parent, parent)]);
    row.pexpire_at(s.now() + crate::spec::TOMBSTONE_MS);
}

/// Step 6: child `id` of this queue, naming `parent`, cancelled unless it started: a pending job
/// never claimed (attempts 0) leaves its ready list and its row is deleted (the `ready` marker
/// leaves `wake` when no ready job is left), a `removed` event naming it; a missing row becomes a
/// tombstone when `tombstone` (state `cancelled`, expiring after `TOMBSTONE_MS`), which a late
/// creation finds. Whether it wrote.
pub fn cancel(s: &Scope, id: &[u8], parent: &[u8], tombstone: bool) -> bool {
    let (ctx, l) = (s.ctx, lit());
    let row = ctx.open_named(s.row(id));
    match row.kind() {
        Kind::Empty if tombstone => {
            leave_tombstone(s, &row, ctx.string(parent).as_str());
            true
        }
        Kind::Hash => {
            let [state, attempts, named] =
                row.hget_each([l.row.state, l.row.attempts, l.row.parent]);
            let ours = attempts.is_some_and(|v| v.bytes() == b"0")
                && named.is_some_and(|v| v.bytes() == parent);
            if ours
                && state
                    .as_ref()
                    .is_some_and(|v| v.bytes() == l.state.waiting.bytes())
            {
                return cancel_parent(s, &row, id);
            }
            let unstarted = ours && state.is_some_and(|v| v.bytes() == l.state.pending.bytes());
            let mut f = s.fresh();
            let (true, Ok(meta), Ok(_), Ok(wake)) = (
                unstarted,
                f.meta(),
                f.structure(PENDING, Kind::List),
                f.structure(WAKE, Kind::Zset),
            ) else {
                return false;
            };
            let id = ctx.string(id);
            let ids = [id.as_str()];
            // in its lane at its priority
            let place = ready::place_of(ctx, row.name());
            let Ok(plan) = ready::plan(&mut f, &meta, &ids, |_| place.clone()) else {
                return false;
            };
            let took = ready::remove(&f, &meta, &plan, plan.group_of(0), id.as_str());
            row.delete();
            ctx.replicate(c"DEL", &[row.name()]);
            if took && !ready::any(&f, &meta) {
                unmark_ready(&wake);
            }
            removed(s, id.as_str().bytes());
            true
        }
        _ => false,
    }
}

/// Step 6: a child parent `id` (its row `row`) that waits, cancelled: it leaves `waiting`, its own
/// unfinished children are cancelled ([`cancel_unfinished`]), its row is deleted. False (nothing
/// written) when `waiting` is of another type.
fn cancel_parent(s: &Scope, row: &Key, id: &[u8]) -> bool {
    let ctx = s.ctx;
    let waiting = ctx.open_named(s.name(WAITING));
    if !waiting.is_empty_or(Kind::Zset) {
        return false;
    }
    let member = ctx.string(id);
    if waiting.zrem(member.as_str()) {
        ctx.replicate(c"ZREM", &[waiting.name(), member.as_str()]);
    }
    cancel_unfinished(s, row, id, true);
    row.delete();
    ctx.replicate(c"DEL", &[row.name()]);
    removed(s, id);
    true
}

/// Step 6: a `removed` event naming child `id`, whose row a cancel deleted (one entry per child,
/// after its own children's: the Lua twin writes the same entries from its work list, reversed).
/// None when `meta` or the stream is of another type (a hand-edited key): the cancel stands.
fn removed(s: &Scope, id: &[u8]) {
    let mut f = s.fresh();
    let Ok(meta) = f.meta() else { return };
    if let Ok(events) = Events::open(&mut f, &meta) {
        events.jobs(lit().event.removed, [id]);
    }
}

/// Step 6 of SEAL: parent `id` (its row `row`), when it waits, is sealed and its children have all
/// finished, leaves `waiting` for the head of pending.
pub fn wake_when_done(s: &Scope, row: &Key, id: Str) {
    let l = lit();
    let number = |f: Str| {
        row.hget(f)
            .and_then(|v| gates::bounded_counter(v.bytes()))
            .unwrap_or(0)
    };
    let waits = row
        .hget(l.row.state)
        .is_some_and(|v| v.bytes() == l.state.waiting.bytes());
    if waits && row.hget(l.row.open).is_none() && number(l.row.finished) >= number(l.row.children) {
        wake(s, row, id);
    }
}

/// The reason a parent fails with: `child <queue> <id> failed: <reason>`.
fn failed_reason(row: &Key, index: &[u8], child: &[u8], detail: &[u8]) -> Vec<u8> {
    let field = row.ctx().string(&[CHILD_FIELD, index].concat());
    let queue = row
        .hget(field.as_str())
        .map(|e| split(e.bytes(), 3).map_or(Vec::new(), |f| f[0].to_vec()));
    let mut r = b"child ".to_vec();
    r.extend_from_slice(&queue.unwrap_or_default());
    r.push(b' ');
    r.extend_from_slice(child);
    r.extend_from_slice(b" failed: ");
    r.extend_from_slice(detail);
    r.truncate(crate::spec::MAX_REASON_BYTES as usize);
    r
}

/// Step 6: the waiting parent `id` (its row `row`) leaves `waiting` for the head of pending.
fn wake(s: &Scope, row: &Key, id: Str) {
    let (ctx, l) = (s.ctx, lit());
    let mut f = s.fresh();
    let (Ok(meta), Ok(pending), Ok(wake), Ok(waiting)) = (
        f.meta(),
        f.structure(PENDING, Kind::List),
        f.structure(WAKE, Kind::Zset),
        f.structure(WAITING, Kind::Zset),
    ) else {
        return;
    };
    let ids = [id];
    // in its lane at its priority (FLOW's `parent_opts`, a node's options)
    let place = ready::place_of(ctx, row.name());
    let Ok(plan) = ready::plan(&mut f, &meta, &ids, |_| place.clone()) else {
        return;
    };
    let was_empty = !ready::any(&f, &meta);
    if waiting.zrem(id) {
        ctx.replicate(c"ZREM", &[waiting.name(), id]);
    }
    ready::push(&f, &meta, &pending, &plan, false);
    row.hset(&[(l.row.state, l.state.pending)]);
    if was_empty {
        mark_ready(&wake);
    }
    ctx.signal_ready(pending.name());
    // no event when the stream is of another type (a hand-edited key): the move stands
    if let Ok(events) = Events::open(&mut f, &meta) {
        events.jobs(l.event.ready, [id.bytes()]);
    }
}

/// Step 6: the waiting parent `id` (its row `row`) buried with `reason` (its retention is the next
/// BURY's or CLAIM's). False (nothing written) when a key it needs is of another type.
fn bury(s: &Scope, row: &Key, id: Str, reason: &[u8]) -> bool {
    let (ctx, l) = (s.ctx, lit());
    let mut f = s.fresh();
    let (Ok(meta), Ok(dead), Ok(waiting)) = (
        f.meta(),
        f.structure(DEAD, Kind::Zset),
        f.structure(WAITING, Kind::Zset),
    ) else {
        return false;
    };
    let Ok(buried) = super::counter(&meta, l.meta.buried) else {
        return false;
    };
    let now = ctx.int(f.now());
    if waiting.zrem(id) {
        ctx.replicate(c"ZREM", &[waiting.name(), id]);
    }
    dead.zadd(f.now() as f64, id);
    ctx.replicate(c"ZADD", &[dead.name(), now.as_str(), id]);
    let reason = ctx.string(reason);
    row.hset(&[
        (l.row.state, l.state.dead),
        (l.row.reason, reason.as_str()),
        (l.row.buried_ms, now.as_str()),
    ]);
    add(&meta, l.meta.buried, buried, 1);
    if let Ok(events) = Events::open(&mut f, &meta) {
        let entry = Fields {
            jobs: Some(id),
            reason: Some(reason.as_str()),
            ..blank()
        };
        events.add(l.event.dead, &entry);
    }
    // a child parent's failure is its own parent's news
    settled(s, &[s.row(id.bytes())], FAILED, |_| reason.as_str());
    true
}

/// Step 6 of DROP, before job `id`'s row `key` (named `row`) is deleted: a waiting `parent` has
/// its unfinished children in other queues cancelled; an unfinished child (pending or scheduled)
/// of a parent in another queue records `removed` there (a `done` entry). What is in this queue
/// goes with it.
pub fn dropped(s: &Scope, key: &Key, row: &Owned, id: &[u8], parent: bool) {
    let l = lit();
    if parent {
        cancel_unfinished(s, key, id, false);
    }
    let state = key.hget(l.row.state);
    let unfinished = state.is_some_and(|v| {
        v.bytes() == l.state.pending.bytes()
            || v.bytes() == l.state.scheduled.bytes()
            || v.bytes() == l.state.waiting.bytes()
    });
    let elsewhere = key
        .hget(l.row.parent)
        .is_some_and(|p| split(p.bytes(), 3).is_some_and(|f| f[0] != s.queue()));
    if unfinished && elsewhere {
        settled(s, std::slice::from_ref(row), REMOVED, |_| l.empty);
    }
}

/// Step 6 of DROP's last call: the outbox's `child` entries leave it (their parents are gone);
/// outcomes and cancels stay for a relay to deliver.
pub fn drop_creations(s: &Scope) {
    let ctx = s.ctx;
    let outbox = ctx.open_named(s.name(OUTBOX));
    if outbox.kind() != Kind::Zset {
        return;
    }
    let members = outbox.due(f64::INFINITY, u64::MAX);
    let prefix = [CHILD, b"\0"].concat();
    let going: Vec<Str> = members
        .iter()
        .filter(|m| m.bytes().starts_with(&prefix))
        .map(|m| m.as_str())
        .collect();
    for &m in &going {
        outbox.zrem(m);
    }
    if !going.is_empty() {
        let mut zrem = vec![outbox.name()];
        zrem.extend(going);
        ctx.replicate(c"ZREM", &zrem);
    }
}

/// Step 6 of OUTBOX: parent `id` of `waiting` whose flow deadline passed is buried, when it still
/// waits, with the reason `flow deadline passed: <finished> of <children> children finished`, and
/// its unfinished children cancelled; a member whose row no longer waits just leaves `waiting`.
pub fn expire(s: &Scope, id: &[u8]) {
    let (ctx, l) = (s.ctx, lit());
    let row = ctx.open_named(s.row(id));
    let id = ctx.string(id);
    let waits = row.kind() == Kind::Hash
        && row
            .hget(l.row.state)
            .is_some_and(|v| v.bytes() == l.state.waiting.bytes());
    if !waits {
        // opened here: a burial before this one may have emptied (deleted) the set
        let waiting = ctx.open_named(s.name(WAITING));
        if waiting.kind() == Kind::Zset && waiting.zrem(id.as_str()) {
            ctx.replicate(c"ZREM", &[waiting.name(), id.as_str()]);
        }
        return;
    }
    let number = |f: Str| {
        row.hget(f)
            .and_then(|v| gates::bounded_counter(v.bytes()))
            .unwrap_or(0)
    };
    let reason = format!(
        "flow deadline passed: {} of {} children finished",
        number(l.row.finished),
        number(l.row.children)
    );
    if bury(s, &row, id.as_str(), reason.as_bytes()) {
        cancel_unfinished(s, &row, id.bytes(), true);
    }
}

/// Step 6 of ACK and BURY, before their rows change: each settled job that names a parent
/// (`parent` on its row) has its outcome `state` (`detail(j)`) recorded there — on a parent of this
/// queue at once ([`record`]), else as a `done` entry of this queue's outbox.
pub fn settled<'d>(s: &Scope, rows: &[Owned], state: &[u8], detail: impl Fn(usize) -> Str<'d>) {
    let (ctx, l) = (s.ctx, lit());
    for (j, name) in rows.iter().enumerate() {
        let row = ctx.open(name.as_str());
        let Some(parent) = row.hget(l.row.parent) else {
            continue;
        };
        let Some(p) = split(parent.bytes(), 3) else {
            continue;
        };
        let id = &name.bytes()[s.row(b"").bytes().len()..];
        let detail = detail(j);
        if p[0] == s.queue() {
            record(s, p[1], p[2], id, state, detail.bytes());
            continue;
        }
        let outbox = ctx.open_named(s.name(OUTBOX));
        if !outbox.is_empty_or(Kind::Zset) {
            continue;
        }
        let entry = ctx.string(&join(&[DONE, p[0], p[1], p[2], id, state, detail.bytes()]));
        let now = s.now();
        outbox.zadd(now as f64, entry.as_str());
        let score = ctx.int(now);
        ctx.replicate(c"ZADD", &[outbox.name(), score.as_str(), entry.as_str()]);
    }
}
