//! `EMQ.OUTBOX 1 <meta> <lease_ms> <count>`: a relay leases up to count free entries of the
//! queue's outbox (score ≤ now: new, or their lease ran out), oldest first, until now + lease_ms;
//! that deadline is each entry's token (greater than any earlier one of the entry: a lease is
//! taken only once the last ran out), which UNBOX presents. First, up to count parents of this
//! queue whose flow deadline passed (their `waiting` score) are buried (`flows::expire`): their
//! children's cancels enter the outbox and may be leased in the same call. Reply: `[token, entry]…`.

use super::flows;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{Kind, Str};
use crate::keyspace::{DEAD, EVENTS, OUTBOX, PENDING, WAITING, WAKE};
use crate::wire::Refusal;

/// Runs OUTBOX's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let ctx = s.ctx;
    let (lease_ms, count) = (args.number(0), args.number(1));
    s.meta()?;
    drop(s.structure(OUTBOX, Kind::Zset)?);
    let waiting = s.structure(WAITING, Kind::Zset)?;
    // what burying an expired parent and cancelling its children write (probed in a migration)
    s.structure(DEAD, Kind::Zset)?;
    s.structure(PENDING, Kind::List)?;
    s.structure(WAKE, Kind::Zset)?;
    s.structure(EVENTS, Kind::Stream)?;
    s.probe()?;
    let now = s.now();
    let due = if waiting.kind() == Kind::Zset {
        waiting.due(now as f64, count as u64)
    } else {
        Vec::new()
    };
    drop(waiting);
    for id in &due {
        flows::expire(s, id.bytes());
    }
    // opened again: the expired parents' cancels may have made it
    let outbox = ctx.open_named(s.name(OUTBOX));
    let entries = outbox.due(now as f64, count as u64);
    let token = now + lease_ms;
    if !entries.is_empty() {
        let score = ctx.int(token);
        let mut effect: Vec<Str> = vec![outbox.name()];
        for e in &entries {
            outbox.zadd(token as f64, e.as_str());
            effect.push(score.as_str());
            effect.push(e.as_str());
        }
        ctx.replicate(c"ZADD", &effect);
    }
    Ok(Reply::Leased { token, entries })
}
