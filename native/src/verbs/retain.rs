//! `EMQ.RETAIN 1 <meta> <dead_max> <dead_age_ms>`: the queue's retention of dead jobs in its `meta`
//! (made if missing), applied at once: the oldest dead jobs past it are deleted, at most
//! `TRIM_LIMIT` per call. Reply: how many.

use super::scope::Scope;
use super::{made, retention};
use crate::command::{Args, Reply};
use crate::ffi::{self, Kind};
use crate::keyspace::DEAD;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs RETAIN's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let meta = s.meta()?;
    let dead = s.structure(DEAD, Kind::Zset)?;
    let now = ffi::now_ms();
    let (max, age) = (args.number(0), args.number(1));
    let victims = retention::pick(s, &dead, now, 0, max, age)?;
    s.probe()?;

    made(&meta, ctx.int(now).as_str());
    let (max_s, age_s) = (ctx.int(max), ctx.int(age));
    meta.hset(&[
        (l.meta.dead_max, max_s.as_str()),
        (l.meta.dead_age_ms, age_s.as_str()),
    ]);
    retention::apply(s, &dead, &victims);
    Ok(Reply::Int(victims.count() as i64))
}
