//! `EMQ.ACK 1 <meta> (<id> <token>)…`: the jobs leave active and their rows are deleted. Reply:
//! the count.

use super::add;
use super::leases::{held, leave_active, Settle};
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
    let Settle {
        ids,
        rows,
        meta,
        keys: [active],
        total,
    } = held(&mut s, args, [(ACTIVE, Kind::Zset)], Some(l.acked))?;

    leave_active(&active, &ids);
    for row in &rows {
        ctx.open(row.as_str()).delete();
    }
    let del: Vec<Str> = rows.iter().map(|r| r.as_str()).collect();
    ctx.replicate(c"DEL", &del);
    add(&meta, l.acked, total, ids.len() as i64);
    Ok(Reply::Int(ids.len() as i64))
}
