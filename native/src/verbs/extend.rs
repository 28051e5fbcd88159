//! `EMQ.EXTEND 1 <meta> <lease_ms> (<id> <token>)…`: each job's lease runs until now + lease_ms.
//! Reply: the count.

use super::leases::{held, Settle};
use super::scope::Scope;
use crate::command::{Args, Call, Reply};
use crate::ffi::{self, lit, Kind, Str};
use crate::keyspace::{Queue, ACTIVE};
use crate::wire::{positive, Refusal, Verb, ID, TOKEN};

/// EXTEND's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.EXTEND",
    command: "emq.extend",
    args: &[positive("lease_ms")],
    group: &[ID, TOKEN],
    min_groups: 1,
    admits: false,
};

/// Runs EXTEND's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let mut s = Scope::new(call, q);
    let ctx = s.ctx;
    let l = lit();
    let Settle {
        ids,
        rows,
        keys: [active],
        ..
    } = held(&mut s, args, [(ACTIVE, Kind::Zset)], None)?;

    let deadline = ffi::now_ms() + args.number(0);
    let deadline_s = ctx.int(deadline);
    let mut zadd: Vec<Str> = vec![active.name()];
    for (j, &id) in ids.iter().enumerate() {
        active.zadd(deadline as f64, id);
        ctx.open(rows[j].as_str())
            .hset(&[(l.deadline_ms, deadline_s.as_str())]);
        zadd.push(deadline_s.as_str());
        zadd.push(id);
    }
    ctx.replicate(c"ZADD", &zadd);
    Ok(Reply::Int(ids.len() as i64))
}
