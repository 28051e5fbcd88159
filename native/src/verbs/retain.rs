//! `EMQ.RETAIN 1 <meta> <dead_max> <dead_age_ms>`: the queue's retention of dead jobs in its `meta`
//! (made if missing); the next BURY or CLAIM applies it. Reply 1.

use super::made_now;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs RETAIN's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let meta = s.meta()?;
    made_now(&meta);
    let (max, age) = (ctx.int(args.number(0)), ctx.int(args.number(1)));
    meta.hset(&[
        (l.meta.dead_max, max.as_str()),
        (l.meta.dead_age_ms, age.as_str()),
    ]);
    Ok(Reply::Int(1))
}
