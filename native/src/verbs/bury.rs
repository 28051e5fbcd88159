//! `EMQ.BURY 1 <meta> (<id> <token> <reason>)…`: each job goes active → dead at now, its reason
//! kept; then the dead set is trimmed to the queue's retention. Reply: the count.

use super::add;
use super::leases::{held, leave_active, Settle};
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
    let Settle {
        ids,
        rows,
        meta,
        keys: [active, dead],
        total,
    } = held(
        &mut s,
        args,
        [(ACTIVE, Kind::Zset), (DEAD, Kind::Zset)],
        Some(l.buried),
    )?;
    let now = ffi::now_ms();
    let victims = retention::select(&mut s, &meta, &dead, now, ids.len() as i64)?;

    leave_active(&active, &ids);
    let now_s = ctx.int(now);
    let mut zadd: Vec<Str> = vec![dead.name()];
    for (j, &id) in ids.iter().enumerate() {
        dead.zadd(now as f64, id);
        ctx.open(rows[j].as_str()).hset(&[
            (l.state, l.dead),
            (l.reason, args.job_bytes(j, 2)),
            (l.buried_ms, now_s.as_str()),
        ]);
        zadd.push(now_s.as_str());
        zadd.push(id);
    }
    ctx.replicate(c"ZADD", &zadd);
    add(&meta, l.buried, total, ids.len() as i64);
    retention::apply(&s, &dead, &victims);
    Ok(Reply::Int(ids.len() as i64))
}
