//! `EMQ.ACK 1 <meta> (<id> <token>)…`: the jobs leave active and their rows are deleted. Reply:
//! the count.

use super::leases::{held, leave_active, Leaves};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{self, Kind, Owned, Str};
use crate::keyspace::ACTIVE;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs ACK's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (settle, [active]) = held(
        s,
        args,
        [(ACTIVE, Kind::Zset)],
        Some(lit().meta.acked),
        Leaves::Gone,
    )?;

    settle.let_go(ffi::now_ms());
    leave_active(s, &settle, &active);
    for row in &settle.rows {
        s.ctx.open(row.as_str()).delete();
    }
    let del: Vec<Str> = settle.rows.iter().map(Owned::as_str).collect();
    s.ctx.replicate(c"DEL", &del);
    settle.freed(s);
    Ok(settle.done())
}
