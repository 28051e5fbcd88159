//! `EMQ.PAUSE 1 <meta>`: the queue's `meta` says `paused 1` (made if missing); claims hand out
//! nothing and waiting claims keep waiting. Reply: 1 when it paused the queue, 0 when it was paused.

use crate::command::{Args, Call, Reply};
use crate::ffi::{self, lit, Kind};
use crate::keyspace::Queue;
use crate::wire::{Refusal, Verb};

use super::scope::Scope;

/// PAUSE's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.PAUSE",
    command: "emq.pause",
    args: &[],
    group: &[],
    min_groups: 1,
    admits: false,
};

/// Runs PAUSE's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, _args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let s = Scope::new(call, q);
    let l = lit();
    let meta = s.meta()?;
    if meta.kind() == Kind::Hash && meta.hget(l.paused).is_some_and(|p| p.bytes() == b"1") {
        return Ok(Reply::Int(0));
    }
    made(&meta);
    let one = s.ctx.int(1);
    meta.hset(&[(l.paused, one.as_str())]);
    Ok(Reply::Int(1))
}

/// A missing `meta` made as an admission makes it: `wire 5 created_ms <now>`.
pub fn made(meta: &crate::ffi::Key) {
    if meta.kind() == Kind::Empty {
        let l = lit();
        let now = meta.ctx().int(ffi::now_ms());
        meta.hset(&[(l.wire, l.wire_value), (l.created_ms, now.as_str())]);
    }
}
