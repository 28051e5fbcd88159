//! `EMQ.PROGRESS 1 <meta> (<id> <token> <value>)…`: each held job's progress is set (token-checked
//! like a settle). Reply: the count.

use super::leases::{held, Leaves};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::keyspace::ACTIVE;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs PROGRESS's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (settle, [_]) = held(s, args, [(ACTIVE, Kind::Zset)], None, Leaves::Stay)?;

    let field = lit().row.progress;
    for (j, row) in settle.rows.iter().enumerate() {
        s.ctx
            .open(row.as_str())
            .hset(&[(field, args.job_bytes(j, 2))]);
    }
    Ok(settle.done())
}
