//! `EMQ.REQUEUE 1 <meta> <limit> [<id>…]`: dead jobs go back to the head of pending with a fresh
//! attempt budget — the ids given (each must be dead: else every stray id is named), or without ids
//! up to limit, oldest first; a `ready` marker on wake when pending was empty. Reply: how many moved.

use super::scope::Scope;
use super::{members, moved_to_head, once};
use crate::command::{Args, Reply};
use crate::ffi::{Kind, Owned, Str};
use crate::keyspace::{DEAD, PENDING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs REQUEUE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
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
    let (rows, exists) = s.rows(ids.iter().map(|id| id.bytes()))?;
    let stray = if given.is_empty() {
        Vec::new()
    } else {
        members(&dead, ids.iter().map(Owned::as_str), false)
    };
    s.probe()?;
    if !stray.is_empty() {
        return Err(Refusal::NotDead(stray));
    }
    if ids.is_empty() {
        return Ok(Reply::Int(0));
    }

    let was_empty = pending.kind() == Kind::Empty;
    for ((id, row), &exists) in ids.iter().zip(&rows).zip(&exists) {
        dead.zrem(id.as_str());
        pending.push(false, id.as_str());
        if exists {
            let key = ctx.open(row.as_str());
            key.hset(&[(l.row.state, l.state.pending), (l.row.attempts, l.zero)]);
            key.hdel(&[l.row.reason, l.row.buried_ms]);
        }
    }
    let moved: Vec<Str> = ids.iter().map(Owned::as_str).collect();
    moved_to_head(ctx, &dead, &pending, &wake, &moved, was_empty);
    Ok(Reply::Int(ids.len() as i64))
}
