//! `EMQ.ACK 2 <row> <active> <id>`: the id leaves active and its row is deleted. Reply 1.

use super::{expect, expect_active, fence, gate_id, row_queue, same, shape};
use crate::command::{Call, Reply};
use crate::keyspace::ACTIVE;
use crate::store::{self, Key, Kind};
use crate::wire::{Refusal, Verb};

/// ACK's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.ACK",
    command: "emq.ack\0",
    numkeys: b"2",
    keys: 2,
    args: 1,
};

/// Runs ACK.
pub fn run(call: &Call, verb: &Verb) -> Result<Reply, Refusal> {
    shape(call, verb)?;
    let ctx = call.ctx;
    let (row, active) = (call.key(0), call.key(1));
    let id = call.arg(verb, 0);
    let q = row_queue(call, verb)?;
    same(call, &q, 1, ACTIVE)?;
    fence(call)?;
    gate_id(id)?;

    let row_k = Key::write(ctx, row);
    let active_k = Key::write(ctx, active);
    expect(&row_k, Kind::Hash)?;
    expect(&active_k, Kind::Zset)?;
    expect_active(&row_k, &active_k, id)?;

    active_k.zrem(id);
    row_k.delete();

    store::replicate(ctx, c"ZREM", &[active, id]);
    store::replicate(ctx, c"DEL", &[row]);
    Ok(Reply::Int(1))
}
