//! `EMQ.PENALIZE 1 <meta> <penalty_ms>` (the twin of `lib/lua/penalize.ts`): `meta`'s `parked`
//! (made if missing) becomes now + penalty_ms, unless a later park is in force; claims hand out
//! nothing until then. Reply: the park's end.

use super::limits;
use super::made;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs PENALIZE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let meta = s.meta()?;
    let now = ffi::now_ms();
    made(&meta, s.ctx.int(now).as_str());
    let until = now + args.number(1);
    if let Some(parked) = limits::read(&meta).parked.filter(|&p| p >= until) {
        return Ok(Reply::Int(parked));
    }
    let at = s.ctx.int(until);
    meta.hset(&[(lit().meta.parked, at.as_str())]);
    Ok(Reply::Int(until))
}
