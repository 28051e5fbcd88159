//! `EMQ.UNSCHEDULE 1 <meta> <name>`: the scheduler's hash and its member of `schedulers` are
//! deleted; jobs it admitted stay. Reply: 1 when it removed the scheduler, 0 when there was none.

use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::keyspace::SCHEDULERS;
use crate::wire::Refusal;

/// Runs UNSCHEDULE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let name = args.bytes(0);
    s.meta()?;
    let key = s.scheduler(name.bytes());
    let sched = s.expect(key.as_str(), Kind::Hash)?;
    let index = s.structure(SCHEDULERS, Kind::Zset)?;
    s.probe()?;

    let ctx = s.ctx;
    let existed = sched.kind() == Kind::Hash;
    if existed {
        sched.delete();
        ctx.replicate(c"DEL", &[key.as_str()]);
    }
    if index.kind() == Kind::Zset && index.zrem(name) {
        ctx.replicate(c"ZREM", &[index.name(), name]);
    }
    Ok(Reply::Int(i64::from(existed)))
}
