//! `EMQ.ACK 1 <meta> (<id> <token> <result>)…`: the jobs leave active. When the queue keeps
//! completed jobs (`meta`'s `completed_max`, absent: 1000) their rows stay, state `completed` with
//! `finished_ms` and the result (when not empty), in `completed` scored by now, and the completed
//! set is trimmed to the queue's retention (`retention`); with `completed_max` 0 their rows are
//! deleted (a flow child's becomes a tombstone: a second delivery of its creation makes nothing). Their deduplication keys are let go; one `completed` event names them, with their
//! results (each up to `EVENT_RESULT_MAX_BYTES`; a longer one flagged `-1:`). Reply: the count.

use super::flows;
use super::events::{blank, Fields};
use super::leases::{self, held_for_good, leave_for_good};
use super::retention::{self, keep_in, Kept, Victims};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{Ctx, Owned, Str};
use crate::keyspace::COMPLETED;
use crate::literals::lit;
use crate::spec::EVENT_RESULT_MAX_BYTES;
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
                // the token stays: the claim's time (token / TOKENS_PER_MS) after the settle
                row.hdel(&[l.row.deadline_ms]);
            },
        ),
        None => {
            // a flow's child leaves a tombstone: a second delivery of its creation (its relay
            // died between APPLY and UNBOX) must not make it again
            let parents: Vec<Option<Owned>> = settle
                .rows
                .iter()
                .map(|row| ctx.open(row.as_str()).hget(l.row.parent))
                .collect();
            for row in &settle.rows {
                ctx.open(row.as_str()).delete();
            }
            let del: Vec<Str> = settle.rows.iter().map(Owned::as_str).collect();
            ctx.replicate(c"DEL", &del);
            for (row, parent) in settle.rows.iter().zip(&parents) {
                if let Some(parent) = parent {
                    flows::leave_tombstone(s, &ctx.open(row.as_str()), parent.as_str());
                }
            }
        }
    }
    settle.freed(s);
    let reply = settle.done();
    if settle.events.on() {
        if let Some(jobs) = settle.events.list(settle.ids.iter().map(|id| id.bytes())) {
            let results = results(ctx, args, settle.ids.len());
            let entry = Fields {
                jobs: Some(jobs.as_str()),
                results: results.as_ref().map(Owned::as_str),
                ..blank()
            };
            settle.events.add(l.event.completed, &entry);
        }
    }
    reply
}

/// The `completed` entry's `results`: each job's result as `<length>:<bytes>`, in the order of
/// `jobs` (`-1:` one longer than `EVENT_RESULT_MAX_BYTES`, read from its row); none when every
/// result is empty.
fn results<'a>(ctx: Ctx<'a>, args: &Args<'a>, n: usize) -> Option<Owned<'a>> {
    let mut text = Vec::new();
    let mut any = false;
    for j in 0..n {
        let r = args.job_bytes(j, 2).bytes();
        any |= !r.is_empty();
        if r.len() as i64 > EVENT_RESULT_MAX_BYTES {
            text.extend_from_slice(b"-1:");
        } else {
            text.extend_from_slice(format!("{}:", r.len()).as_bytes());
            text.extend_from_slice(r);
        }
    }
    any.then(|| ctx.string(&text))
}
