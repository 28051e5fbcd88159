//! `EMQ.ACK 1 <meta> (<id> <token>)…`: the jobs leave active and their rows are deleted. Reply:
//! the count.

use super::add;
use super::leases::{held, ids};
use super::scope::Scope;
use crate::command::{Args, Call, Reply};
use crate::ffi::{lit, Kind, Str};
use crate::keyspace::{Queue, ACTIVE};
use crate::wire::{Refusal, Verb, ID, TOKEN};

/// ACK's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.ACK",
    command: "emq.ack",
    args: &[],
    group: &[ID, TOKEN],
    min_groups: 1,
    admits: false,
};

/// Runs ACK's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let mut s = Scope::new(call, q);
    let ctx = s.ctx;
    let l = lit();
    let ids = ids(args)?;
    let meta = s.meta()?;
    let active_name = s.name(ACTIVE);
    let active = s.expect(active_name.as_str(), Kind::Zset)?;
    let (rows, acked) = held(&mut s, args, &meta, &active, Some(l.acked))?;

    for &id in &ids {
        active.zrem(id);
    }
    for row in &rows {
        ctx.open(row.as_str()).delete();
    }
    let mut zrem: Vec<Str> = vec![active_name.as_str()];
    zrem.extend(&ids);
    ctx.replicate(c"ZREM", &zrem);
    let del: Vec<Str> = rows.iter().map(|r| r.as_str()).collect();
    ctx.replicate(c"DEL", &del);
    add(&meta, l.acked, acked, ids.len() as i64);
    Ok(Reply::Int(ids.len() as i64))
}
