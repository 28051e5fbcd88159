//! `EMQ.ACK 2 <row> <active> <id>`: the id leaves active and its row is deleted. Reply 1.

use super::{expect, expect_active};
use crate::command::{Args, Call, Reply};
use crate::ffi::Kind;
use crate::keyspace::Queue;
use crate::wire::{Arg, Gate, Refusal, Role, Verb};

/// ACK's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.ACK",
    command: "emq.ack",
    keys: &[Role::Row, Role::Active],
    args: &[Arg {
        name: "id",
        gate: Gate::JobId,
    }],
};

/// Runs ACK's steps 5–6.
pub fn run<'a>(call: &Call<'a>, _q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let ctx = call.ctx;
    let (row, active) = (call.key(0), call.key(1));
    let id = args.bytes(0);
    let row_k = ctx.open(row);
    let active_k = ctx.open(active);
    expect(&row_k, Kind::Hash)?;
    expect(&active_k, Kind::Zset)?;
    expect_active(&row_k, &active_k, id)?;

    active_k.zrem(id);
    row_k.delete();

    ctx.replicate(c"ZREM", &[active, id]);
    ctx.replicate(c"DEL", &[row]);
    Ok(Reply::Int(1))
}
