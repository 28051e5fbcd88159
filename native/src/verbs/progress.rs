//! `EMQ.PROGRESS 1 <meta> (<id> <token> <value>)…`: each held job's progress is set (token-checked
//! like a settle); one `progress` event per job. Reply: the count.

use super::events::{blank, Fields};
use super::leases::{held, Leaves};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::keyspace::ACTIVE;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs PROGRESS's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let structures = [(ACTIVE, Kind::Zset)];
    let (settle, [_]) = held(s, args, (structures, true), None, Leaves::Stay)?;

    let l = lit();
    for (j, row) in settle.rows.iter().enumerate() {
        s.ctx
            .open(row.as_str())
            .hset(&[(l.row.progress, args.job_bytes(j, 2))]);
    }
    let reply = settle.done();
    for (j, &id) in settle.ids.iter().enumerate() {
        let entry = Fields {
            jobs: Some(id),
            progress: Some(args.job_bytes(j, 2)),
            ..blank()
        };
        settle.events.add(l.event.progress, &entry);
    }
    Ok(reply)
}
