//! `EMQ.REQUEUE 1 <meta> <limit> [<id>…]`: dead jobs go back to the head of pending with a fresh
//! attempt budget — the ids given (each must be dead: else every stray id is named), or without ids
//! up to limit, oldest first; a `ready` marker on wake when pending was empty. Reply: how many moved.

use super::once;
use super::scope::Scope;
use crate::command::{Args, Call, Reply};
use crate::ffi::{lit, Kind, Owned, Str};
use crate::keyspace::{Queue, DEAD, PENDING, WAKE};
use crate::wire::{positive, Refusal, Verb, ID};

/// REQUEUE's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.REQUEUE",
    command: "emq.requeue",
    args: &[positive("limit")],
    group: &[ID],
    min_groups: 0,
    admits: false,
};

/// Runs REQUEUE's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let mut s = Scope::new(call, q);
    let ctx = s.ctx;
    let l = lit();
    let given = args.ids();
    once(&given)?;
    s.meta()?;
    let dead = s.structure(DEAD, Kind::Zset)?;
    let pending = s.structure(PENDING, Kind::List)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    let ids: Vec<Owned> = if given.is_empty() {
        dead.due(f64::INFINITY, args.number(0) as u64)
    } else {
        given.iter().map(|id| ctx.string(id.bytes())).collect()
    };
    let mut rows = Vec::with_capacity(ids.len());
    let mut stray = Vec::new();
    for id in &ids {
        let row = s.row_of(id.bytes());
        let exists = s.expect(row.as_str(), Kind::Hash)?.kind() == Kind::Hash;
        if !given.is_empty() && (dead.kind() != Kind::Zset || dead.zscore(id.as_str()).is_none()) {
            stray.push(id.bytes().to_vec());
        }
        rows.push((row, exists));
    }
    s.probe()?;
    if !stray.is_empty() {
        return Err(Refusal::NotDead(stray));
    }
    if ids.is_empty() {
        return Ok(Reply::Int(0));
    }

    let was_empty = pending.kind() == Kind::Empty;
    let (reason, buried) = (ctx.string(b"reason"), ctx.string(b"buried_ms"));
    for (id, (row, exists)) in ids.iter().zip(&rows) {
        dead.zrem(id.as_str());
        pending.push(false, id.as_str());
        if *exists {
            let key = ctx.open(row.as_str());
            key.hset(&[(l.state, l.pending), (l.attempts, l.zero)]);
            key.hdel(&[reason.as_str(), buried.as_str()]);
        }
    }
    let mut args_: Vec<Str> = vec![dead.name()];
    args_.extend(ids.iter().map(Owned::as_str));
    ctx.replicate(c"ZREM", &args_);
    args_[0] = pending.name();
    ctx.replicate(c"LPUSH", &args_);
    if was_empty {
        wake.zadd(0.0, l.ready);
        ctx.replicate(c"ZADD", &[wake.name(), l.zero, l.ready]);
    }
    ctx.signal_ready(pending.name());
    Ok(Reply::Int(ids.len() as i64))
}
