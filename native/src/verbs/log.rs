//! `EMQ.LOG 1 <meta> (<id> <token> <line>)…`: each held job's log gets its line (token-checked like
//! a settle: a worker that lost the job logs nothing), among the row's newest `LOG_LINES_KEPT`
//! (`ring`). No event. Reply: the count.

use super::leases::{held, Leaves};
use super::ring;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::keyspace::ACTIVE;
use crate::literals::lit;
use crate::spec::LOG_LINES_KEPT;
use crate::wire::Refusal;

/// Runs LOG's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let structures = [(ACTIVE, Kind::Zset)];
    let (settle, [_]) = held(s, args, (structures, false), None, Leaves::Stay)?;

    let l = lit();
    for (j, row) in settle.rows.iter().enumerate() {
        let row = s.ctx.open(row.as_str());
        ring::push(&row, (l.row.logs, l.row.log, LOG_LINES_KEPT), args.job_bytes(j, 2));
    }
    Ok(settle.done())
}
