//! `EMQ.ENQUEUE 2 <row> <pending> <id> <payload>`: a new row in state `pending`, the id pushed on
//! the head of pending. Reply 1.

use super::expect;
use crate::command::{Args, Call, Reply};
use crate::ffi::{self, lit, Kind};
use crate::keyspace::Queue;
use crate::wire::{Arg, Gate, Refusal, Role, Verb};

/// ENQUEUE's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.ENQUEUE",
    command: "emq.enqueue",
    keys: &[Role::Row, Role::Pending],
    args: &[
        Arg {
            name: "id",
            gate: Gate::JobId,
        },
        Arg {
            name: "payload",
            gate: Gate::Payload,
        },
    ],
};

/// Runs ENQUEUE's steps 5–6.
pub fn run<'a>(call: &Call<'a>, _q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let ctx = call.ctx;
    let (row, pending) = (call.key(0), call.key(1));
    let (id, payload) = (args.bytes(0), args.bytes(1));
    let row_k = ctx.open(row);
    let pending_k = ctx.open(pending);
    expect(&row_k, Kind::Hash)?;
    expect(&pending_k, Kind::List)?;
    if row_k.kind() != Kind::Empty {
        return Err(Refusal::Duplicate);
    }

    let l = lit();
    let now = ctx.int(ffi::now_ms());
    row_k.hset(&[
        (l.state, l.pending),
        (l.payload, payload),
        (l.attempts, l.zero),
        (l.created_ms, now.as_str()),
    ]);
    pending_k.push(false, id);

    ctx.replicate(c"LPUSH", &[pending, id]);
    Ok(Reply::Int(1))
}
