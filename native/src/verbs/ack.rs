//! `EMQ.ACK 1 <meta> (<id> <token> <result>)…`: the jobs leave active. When the queue keeps
//! completed jobs (`meta`'s `completed_max`, absent: 1000) their rows stay, state `completed` with
//! `finished_ms` and the result (when not empty), in `completed` scored by now, and the completed
//! set is trimmed to the queue's retention (`retention`); with `completed_max` 0 their rows are
//! deleted. Their deduplication keys are let go; one `completed` event names them. Reply: the
//! count.

use super::flows;
use super::leases::{self, held_for_good, leave_for_good};
use super::retention::{self, keep_in, Kept, Victims};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{Owned, Str};
use crate::keyspace::COMPLETED;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs ACK's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let checked = check(s, args)?;
    Ok(write(s, args, checked))
}

/// ACK's step 5 done: the jobs held, its structures, and what else its writes need.
pub type Checked<'a> = leases::Checked<'a, 2, Option<Victims<'a>>>;

/// ACK's step 5: every check, nothing written.
pub fn check<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Checked<'a>, Refusal> {
    let (settle, keys) = held_for_good(s, args, COMPLETED, lit().meta.acked)?;
    let now = s.now();
    let n = settle.ids.len() as i64;
    let keeps = retention::completed_max(&settle.meta) > 0;
    let victims = if keeps {
        Some(retention::select(
            s,
            &settle.meta,
            &keys[1],
            Kept::Completed,
            now,
            n,
        )?)
    } else {
        None
    };
    Ok(Checked {
        settle,
        keys,
        with: victims,
    })
}

/// ACK's step 6, after [`check`]: every write, and the reply.
pub fn write<'a>(s: &Scope<'a>, args: &Args<'a>, checked: Checked<'a>) -> Reply<'a> {
    let (ctx, l) = (s.ctx, lit());
    let (settle, completed, victims, now) = leave_for_good(s, checked);
    flows::settled(s, &settle.rows, flows::COMPLETED, |j| args.job_bytes(j, 2));
    match &victims {
        Some(victims) => keep_in(
            s,
            (&settle.ids, &settle.rows),
            &completed,
            now,
            victims,
            |j, row, at| {
                let result = args.job_bytes(j, 2);
                let mut fields = vec![(l.row.state, l.state.completed), (l.row.finished_ms, at)];
                if !result.bytes().is_empty() {
                    fields.push((l.row.result, result));
                }
                row.hset(&fields);
                row.hdel(&[l.row.deadline_ms, l.row.token]);
            },
        ),
        None => {
            for row in &settle.rows {
                ctx.open(row.as_str()).delete();
            }
            let del: Vec<Str> = settle.rows.iter().map(Owned::as_str).collect();
            ctx.replicate(c"DEL", &del);
        }
    }
    settle.freed(s);
    let reply = settle.done();
    let acked = settle.ids.iter().map(|id| id.bytes());
    settle.events.jobs(l.event.completed, acked);
    reply
}
