//! `EMQ.LIMIT 1 <meta> <concurrency> <rate_max> <rate_per_ms> <rate_burst>` (the twin of
//! `lib/lua/limit.ts`): the queue's concurrency limit (0: none) and rate limit (rate_max 0: none)
//! in `meta` (made if missing); a rate other than the one in force drops its state, so it starts
//! from a full bucket; `ready` on wake when pending holds ids, and waiting claims told (they try
//! the new limits). Reply: 1.

use super::made_now;
use super::mark_ready;
use super::ready;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::keyspace::{PENDING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs LIMIT's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let (conc, max, per, burst) = (
        args.number(2),
        args.number(3),
        args.number(4),
        args.number(5),
    );
    let meta = s.meta()?;
    let pending = s.structure(PENDING, Kind::List)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    s.probe()?;

    made_now(&meta);
    if conc == 0 {
        meta.hdel(&[l.meta.concurrency]);
    } else {
        let c = ctx.int(conc);
        meta.hset(&[(l.meta.concurrency, c.as_str())]);
    }
    if max == 0 {
        meta.hdel(&[l.meta.rate, l.meta.tat]);
    } else {
        let rate = ctx.string(format!("{max} {per} {burst}").as_bytes());
        if meta
            .hget(l.meta.rate)
            .is_none_or(|r| r.bytes() != rate.bytes())
        {
            meta.hset(&[(l.meta.rate, rate.as_str())]);
            meta.hdel(&[l.meta.tat]);
        }
    }
    if ready::any(s, &meta) {
        mark_ready(&wake);
        ctx.signal_ready(pending.name());
    }
    Ok(Reply::Int(1))
}
