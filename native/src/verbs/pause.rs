//! `EMQ.PAUSE 1 <meta>`: the queue's `meta` says `paused 1` (made if missing); claims hand out
//! nothing and waiting claims keep waiting. Reply: 1 when it paused the queue, 0 when it was paused.

use super::scope::Scope;
use super::{made_now, paused};
use crate::command::{Args, Reply};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs PAUSE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, _args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let meta = s.meta()?;
    if paused(&meta) {
        return Ok(Reply::Int(0));
    }
    made_now(&meta);
    let one = s.ctx.int(1);
    meta.hset(&[(lit().meta.paused, one.as_str())]);
    Ok(Reply::Int(1))
}
