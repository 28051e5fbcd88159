//! `EMQ.RESUME 1 <meta>`: `paused` leaves the queue's `meta`; a `ready` marker on wake when pending
//! holds ids, and waiting claims are woken. Reply: 1 when it resumed the queue, 0 when it was not
//! paused.

use super::scope::Scope;
use crate::command::{Args, Call, Reply};
use crate::ffi::{lit, Kind};
use crate::keyspace::{Queue, PENDING, WAKE};
use crate::wire::{Refusal, Verb};

/// RESUME's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.RESUME",
    command: "emq.resume",
    args: &[],
    group: &[],
    min_groups: 1,
    admits: false,
};

/// Runs RESUME's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, _args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let mut s = Scope::new(call, q);
    let ctx = s.ctx;
    let l = lit();
    let meta = s.meta()?;
    let pending = s.structure(PENDING, Kind::List)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    s.probe()?;
    let paused =
        meta.kind() == Kind::Hash && meta.hget(l.paused).is_some_and(|p| p.bytes() == b"1");
    if !paused {
        return Ok(Reply::Int(0));
    }
    meta.hdel(&[l.paused]);
    if pending.kind() == Kind::List {
        wake.zadd(0.0, l.ready);
        ctx.replicate(c"ZADD", &[wake.name(), l.zero, l.ready]);
    }
    ctx.signal_ready(pending.name());
    Ok(Reply::Int(1))
}
