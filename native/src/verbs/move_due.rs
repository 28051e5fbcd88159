//! The mover PROMOTE and REAP share (the twin of `lib/lua/move_due.ts`): up to `limit` ids of a
//! sorted set with score ≤ now (ascending) move onto pending, and the state of each existing row
//! becomes `pending`. Every row is checked before anything is written.

use super::expect;
use crate::command::{Call, Reply};
use crate::ffi::{self, lit, Kind, Str};
use crate::keyspace::{self, Queue};
use crate::wire::Refusal;

/// Keys `[from, pending, base]` of `call`: moves due ids of `from` to pending (`tail`: RPUSH,
/// else LPUSH). Replies with the number moved.
pub fn move_due<'a>(
    call: &Call<'a>,
    _q: &Queue<'a>,
    limit: i64,
    tail: bool,
) -> Result<Reply<'a>, Refusal> {
    let ctx = call.ctx;
    let (from, pending, base) = (call.key(0), call.key(1), call.key(2));
    let from_k = ctx.open(from);
    let pending_k = ctx.open(pending);
    expect(&from_k, Kind::Zset)?;
    expect(&pending_k, Kind::List)?;

    let ids = from_k.due(ffi::now_ms() as f64, limit as u64);
    let names: Vec<_> = ids
        .iter()
        .map(|id| ctx.string(&keyspace::row_of(base.bytes(), id.bytes())))
        .collect();
    let mut rows = Vec::with_capacity(ids.len());
    for name in &names {
        let row = ctx.open(name.as_str());
        match row.kind() {
            Kind::Empty => rows.push(None),
            Kind::Hash => rows.push(Some(row)),
            _ => return Err(Refusal::WrongType),
        }
    }
    if ids.is_empty() {
        return Ok(Reply::Int(0));
    }

    let l = lit();
    for (id, row) in ids.iter().zip(&rows) {
        from_k.zrem(id.as_str());
        pending_k.push(tail, id.as_str());
        if let Some(row) = row {
            row.hset(&[(l.state, l.pending)]);
        }
    }

    let mut args: Vec<Str> = Vec::with_capacity(ids.len() + 1);
    args.push(from);
    args.extend(ids.iter().map(|id| id.as_str()));
    ctx.replicate(c"ZREM", &args);
    args[0] = pending;
    ctx.replicate(if tail { c"RPUSH" } else { c"LPUSH" }, &args);
    Ok(Reply::Int(ids.len() as i64))
}
