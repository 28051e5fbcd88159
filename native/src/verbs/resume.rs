//! `EMQ.RESUME 1 <meta>`: `paused` leaves the queue's `meta`; a `ready` marker on wake when pending
//! holds ids, and waiting claims are woken. Reply: 1 when it resumed the queue, 0 when it was not
//! paused.

use super::mark_ready;
use super::paused;
use super::ready;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::keyspace::{PENDING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs RESUME's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, _args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let meta = s.meta()?;
    let pending = s.structure(PENDING, Kind::List)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    s.probe()?;
    if !paused(&meta) {
        return Ok(Reply::Int(0));
    }
    meta.hdel(&[l.meta.paused]);
    if ready::any(s, &meta) {
        mark_ready(&wake);
    }
    ctx.signal_ready(pending.name());
    Ok(Reply::Int(1))
}
