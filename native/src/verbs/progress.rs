//! `EMQ.PROGRESS 1 <meta> (<id> <token> <value>)…`: each held job's progress is set (token-checked
//! like a settle). Reply: the count.

use super::leases::{held, Settle};
use super::scope::Scope;
use crate::command::{Args, Call, Reply};
use crate::ffi::{Kind, Str};
use crate::keyspace::{Queue, ACTIVE};
use crate::wire::{Arg, Gate, Refusal, Verb, ID, TOKEN};

/// PROGRESS's call shape.
pub const VERB: Verb = Verb {
    name: "EMQ.PROGRESS",
    command: "emq.progress",
    args: &[],
    group: &[
        ID,
        TOKEN,
        Arg {
            name: "value",
            gate: Gate::Progress,
        },
    ],
    min_groups: 1,
    admits: false,
};

/// Runs PROGRESS's steps 5–6.
pub fn run<'a>(call: &Call<'a>, q: &Queue<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let mut s = Scope::new(call, q);
    let ctx = s.ctx;
    let Settle { ids, rows, .. } = held(&mut s, args, [(ACTIVE, Kind::Zset)], None)?;

    let field = ctx.string(b"progress");
    for (j, row) in rows.iter().enumerate() {
        let value: Str = args.job_bytes(j, 2);
        ctx.open(row.as_str()).hset(&[(field.as_str(), value)]);
    }
    Ok(Reply::Int(ids.len() as i64))
}
