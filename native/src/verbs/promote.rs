//! `EMQ.PROMOTE 1 <meta> <limit>`: up to limit due ids move schedule → pending (LPUSH), their rows
//! to state `pending`; a `ready` marker on wake when any moved. Reply: ids moved.

use super::move_due::{apply, select};
use super::scope::Scope;
use crate::command::{Args, Call, Reply};
use crate::ffi::{self, lit, Kind};
use crate::keyspace::{Queue, PENDING, SCHEDULE, WAKE};
use crate::wire::{positive, Refusal, Verb};

/// PROMOTE's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.PROMOTE",
    command: "emq.promote",
    args: &[positive("limit")],
    group: &[],
    min_groups: 1,
    admits: false,
};

/// Runs PROMOTE's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    moved(call, q, args.number(0), SCHEDULE, false)
}

/// PROMOTE and REAP: due ids of the sorted set of type `from` move onto pending (`tail`: RPUSH).
pub fn moved<'a>(
    call: &Call<'a>,
    q: &Queue<'a>,
    limit: i64,
    from: &[u8],
    tail: bool,
) -> Result<Reply<'a>, Refusal> {
    let mut s = Scope::new(call, q);
    let ctx = s.ctx;
    s.meta()?;
    let (from_name, pending_name, wake_name) = (s.name(from), s.name(PENDING), s.name(WAKE));
    let from_k = s.expect(from_name.as_str(), Kind::Zset)?;
    let pending = s.expect(pending_name.as_str(), Kind::List)?;
    let wake = s.expect(wake_name.as_str(), Kind::Zset)?;
    let due = select(&mut s, &from_k, ffi::now_ms(), limit as u64)?;
    s.probe()?;

    let moved = apply(&s, &from_k, &pending, tail, &due);
    if moved > 0 {
        let l = lit();
        wake.zadd(0.0, l.ready);
        ctx.replicate(c"ZADD", &[wake_name.as_str(), l.zero, l.ready]);
        ctx.signal_ready(pending_name.as_str());
    }
    Ok(Reply::Int(moved as i64))
}
