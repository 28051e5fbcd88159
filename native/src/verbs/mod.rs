//! The eight wire-4 verbs, one file each, and the steps they share. Every handler runs, in order:
//! shape → layout → fence → gates → domain checks → writes → replication of the effects, and
//! writes nothing unless it reaches the writes (see `docs/WIRE.md`).

pub mod ack;
pub mod bury;
pub mod claim;
pub mod enqueue;
pub mod promote;
pub mod reap;
pub mod retry;
pub mod schedule;

use crate::command::Call;
use crate::config;
use crate::gates;
use crate::keyspace::{self, Queue};
use crate::store::{self, lit, Key, Kind, Str};
use crate::wire::{Refusal, Verb, WIRE};

/// Step 1: numkeys is exactly the verb's (byte for byte, as EVAL parses it) and so is argc.
pub fn shape(call: &Call, verb: &Verb) -> Result<(), Refusal> {
    if call.argc() != verb.argc() || call.bytes(1) != verb.numkeys {
        return Err(Refusal::Arity);
    }
    Ok(())
}

/// Step 2, first key of a set-first verb: recovers the queue from key 0, whose type must be `ty`.
pub fn first_queue<'a>(call: &Call<'a>, ty: &[u8]) -> Result<Queue<'a>, Refusal> {
    Queue::from_key(call.bytes(2), ty).ok_or(Refusal::Layout)
}

/// Step 2, first key of a row-first verb: key 0 must be `emq:{q}:job:<id>` with `<id>` the id
/// argument (argument 0) byte for byte.
pub fn row_queue<'a>(call: &Call<'a>, verb: &Verb) -> Result<Queue<'a>, Refusal> {
    let (name, ty) = keyspace::split_queue_key(call.bytes(2)).ok_or(Refusal::Layout)?;
    let id = store::bytes(call.arg(verb, 0));
    match ty.strip_prefix(keyspace::JOB) {
        Some(found) if found == id => Queue::new(name).ok_or(Refusal::Layout),
        _ => Err(Refusal::Layout),
    }
}

/// Step 2, every other key: declared key `i` must be exactly the queue's key of type `ty`.
pub fn same(call: &Call, q: &Queue, i: usize, ty: &[u8]) -> Result<(), Refusal> {
    if q.is_key(store::bytes(call.key(i)), ty) {
        Ok(())
    } else {
        Err(Refusal::Layout)
    }
}

/// Step 3: the node's `emq.wire` must be 4; on a standalone server the string key
/// `{emq}:version`, when present, must be `4` (a key of another type counts as absent).
pub fn fence(call: &Call) -> Result<(), Refusal> {
    let w = config::wire();
    if w != WIRE {
        return Err(Refusal::Fenced(w.to_string().into_bytes()));
    }
    if !store::cluster_mode(call.ctx) {
        if let Some(k) = Key::read(call.ctx, lit().version_key) {
            if k.kind() == Kind::String && k.string() != b"4" {
                return Err(Refusal::Fenced(k.string().to_vec()));
            }
        }
    }
    Ok(())
}

/// Step 4: the id starts with `JOB`.
pub fn gate_id(id: Str) -> Result<(), Refusal> {
    if gates::job_id(store::bytes(id)) {
        Ok(())
    } else {
        Err(Refusal::NotJobId)
    }
}

/// Step 4: a number of 1 to 15 digits, ≥ 1 when `positive`.
pub fn gate_number(arg: Str, field: &'static str, positive: bool) -> Result<i64, Refusal> {
    let b = store::bytes(arg);
    let n = if positive {
        gates::positive(b)
    } else {
        gates::non_negative(b)
    };
    n.map(|n| n as i64).ok_or(Refusal::Number(field, positive))
}

/// Step 4: the payload is at most `emq.max-payload` bytes.
pub fn gate_payload(payload: Str) -> Result<(), Refusal> {
    let limit = config::max_payload();
    if store::bytes(payload).len() as i64 > limit {
        return Err(Refusal::PayloadTooLarge(limit));
    }
    Ok(())
}

/// Step 4: the reason is at most 4096 bytes.
pub fn gate_reason(reason: Str) -> Result<(), Refusal> {
    if store::bytes(reason).len() > gates::MAX_REASON {
        return Err(Refusal::ReasonTooLarge);
    }
    Ok(())
}

/// Step 5: the key is missing or has type `kind`.
pub fn expect(key: &Key, kind: Kind) -> Result<(), Refusal> {
    if key.is_empty_or(kind) {
        Ok(())
    } else {
        Err(Refusal::WrongType)
    }
}

/// Step 5 for ACK/RETRY/BURY: the id is a member of active and its row exists.
pub fn expect_active(row: &Key, active: &Key, id: Str) -> Result<(), Refusal> {
    if row.kind() == Kind::Hash && active.kind() == Kind::Zset && active.zscore(id).is_some() {
        Ok(())
    } else {
        Err(Refusal::NotActive)
    }
}

/// PROMOTE and REAP: keys `[from, pending, base]`, argument `limit`. Moves up to `limit` ids of
/// `from` with score ≤ now (ascending) onto pending (`tail`: RPUSH, else LPUSH) and sets the
/// state of each existing row to `pending`. Every row is checked before anything is written.
pub fn move_due(
    call: &Call,
    verb: &Verb,
    from_ty: &[u8],
    tail: bool,
) -> Result<crate::command::Reply, Refusal> {
    shape(call, verb)?;
    let ctx = call.ctx;
    let (from, pending, base) = (call.key(0), call.key(1), call.key(2));
    let limit = call.arg(verb, 0);
    let q = first_queue(call, from_ty)?;
    same(call, &q, 1, keyspace::PENDING)?;
    same(call, &q, 2, b"")?;
    fence(call)?;
    let limit = gate_number(limit, "limit", true)?;

    let from_k = Key::write(ctx, from);
    let pending_k = Key::write(ctx, pending);
    expect(&from_k, Kind::Zset)?;
    expect(&pending_k, Kind::List)?;

    let now = store::now_ms();
    let ids = from_k.due(now as f64, limit as u64);
    let base_b = store::bytes(base);
    let mut rows = Vec::with_capacity(ids.len());
    for id in &ids {
        let name = store::Owned::new(ctx, &keyspace::row_of(base_b, id.bytes()));
        let row = Key::write(ctx, name.ptr());
        match row.kind() {
            Kind::Empty => rows.push(None),
            Kind::Hash => rows.push(Some((name, row))),
            _ => return Err(Refusal::WrongType),
        }
    }
    if ids.is_empty() {
        return Ok(crate::command::Reply::Int(0));
    }

    let l = lit();
    for (id, row) in ids.iter().zip(&rows) {
        from_k.zrem(id.ptr());
        pending_k.push(tail, id.ptr());
        if let Some((_, row)) = row {
            row.hset(&[(l.state, l.pending)]);
        }
    }

    let mut args: Vec<Str> = Vec::with_capacity(ids.len() + 1);
    args.push(from);
    args.extend(ids.iter().map(|id| id.ptr()));
    store::replicate(ctx, c"ZREM", &args);
    args[0] = pending;
    store::replicate(ctx, if tail { c"RPUSH" } else { c"LPUSH" }, &args);
    Ok(crate::command::Reply::Int(ids.len() as i64))
}
