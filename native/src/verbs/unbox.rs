//! `EMQ.UNBOX 1 <meta> (<deadline> <entry>)…`: a relay acknowledges entries it applied: each
//! entry whose score is still its token leaves the outbox. An entry held under another token (the
//! relay's lease ran out and another relay leased it) refuses the whole call, writing nothing; an
//! entry already gone counts 0. Reply: the entries removed.

use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{Kind, Str};
use crate::keyspace::OUTBOX;
use crate::wire::Refusal;

/// Runs UNBOX's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let ctx = s.ctx;
    s.meta()?;
    let outbox = s.structure(OUTBOX, Kind::Zset)?;
    s.probe()?;
    let mut going: Vec<Str> = Vec::new();
    if outbox.kind() == Kind::Zset {
        for j in 0..args.jobs() {
            let entry = args.job_bytes(j, 1);
            match outbox.zscore(entry) {
                Some(score) if score == args.job_number(j, 0) as f64 => going.push(entry),
                Some(_) => return Err(Refusal::OutboxLost),
                None => {}
            }
        }
    }
    let mut removed = 0;
    for &entry in &going {
        if outbox.zrem(entry) {
            ctx.replicate(c"ZREM", &[outbox.name(), entry]);
            removed += 1;
        }
    }
    Ok(Reply::Int(removed))
}
