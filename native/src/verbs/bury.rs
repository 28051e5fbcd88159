//! `EMQ.BURY 1 <meta> (<id> <token> <reason>)…`: each job goes active → dead at now, its reason
//! kept; then the dead set is trimmed to the queue's retention. Reply: the count.

use super::add;
use super::leases::{held, ids};
use super::retention;
use super::scope::Scope;
use crate::command::{Args, Call, Reply};
use crate::ffi::{self, lit, Kind, Str};
use crate::keyspace::{Queue, ACTIVE, DEAD};
use crate::wire::{Arg, Gate, Refusal, Verb, ID, TOKEN};

/// BURY's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.BURY",
    command: "emq.bury",
    args: &[],
    group: &[
        ID,
        TOKEN,
        Arg {
            name: "reason",
            gate: Gate::Reason,
        },
    ],
    min_groups: 1,
    admits: false,
};

/// Runs BURY's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let mut s = Scope::new(call, q);
    let ctx = s.ctx;
    let l = lit();
    let ids = ids(args)?;
    let meta = s.meta()?;
    let (active_name, dead_name) = (s.name(ACTIVE), s.name(DEAD));
    let active = s.expect(active_name.as_str(), Kind::Zset)?;
    let dead = s.expect(dead_name.as_str(), Kind::Zset)?;
    let (rows, buried) = held(&mut s, args, &meta, &active, Some(l.buried))?;
    let now = ffi::now_ms();
    let victims = retention::select(&mut s, &meta, &dead, now, ids.len() as i64)?;

    let now_s = ctx.int(now);
    let mut zadd: Vec<Str> = vec![dead_name.as_str()];
    for (j, &id) in ids.iter().enumerate() {
        active.zrem(id);
        dead.zadd(now as f64, id);
        ctx.open(rows[j].as_str()).hset(&[
            (l.state, l.dead),
            (l.reason, args.job_bytes(j, 2)),
            (l.buried_ms, now_s.as_str()),
        ]);
        zadd.push(now_s.as_str());
        zadd.push(id);
    }
    let mut zrem: Vec<Str> = vec![active_name.as_str()];
    zrem.extend(&ids);
    ctx.replicate(c"ZREM", &zrem);
    ctx.replicate(c"ZADD", &zadd);
    add(&meta, l.buried, buried, ids.len() as i64);
    retention::apply(&s, &dead, &victims);
    Ok(Reply::Int(ids.len() as i64))
}
