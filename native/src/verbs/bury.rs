//! `EMQ.BURY 1 <meta> (<id> <token> <reason> <failure>)…`: each job goes active → dead at now, its
//! reason kept and its failure (the error) among the row's failures; then the dead set is trimmed to the queue's retention. One `dead` event per job. Reply:
//! the count.

use super::events::{blank, Fields};
use super::flows;
use super::ring;
use super::leases::{self, held_for_good, leave_for_good};
use super::retention::{self, keep_in, Kept, Victims};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::keyspace::DEAD;
use crate::literals::lit;
use crate::spec::FAILURES_KEPT;
use crate::wire::Refusal;

/// Runs BURY's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let checked = check(s, args)?;
    Ok(write(s, args, checked))
}

/// BURY's step 5 done: the jobs held, its structures, and what else its writes need.
pub type Checked<'a> = leases::Checked<'a, 2, Victims<'a>>;

/// BURY's step 5: every check, nothing written.
pub fn check<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Checked<'a>, Refusal> {
    let (settle, keys) = held_for_good(s, args, DEAD, lit().meta.buried)?;
    let now = s.now();
    let adding = settle.ids.len() as i64;
    let victims = retention::select(s, &settle.meta, &keys[1], Kept::Dead, now, adding)?;
    Ok(Checked {
        settle,
        keys,
        with: victims,
    })
}

/// BURY's step 6, after [`check`]: every write, and the reply.
pub fn write<'a>(s: &Scope<'a>, args: &Args<'a>, checked: Checked<'a>) -> Reply<'a> {
    let l = lit();
    let (settle, dead, victims, now) = leave_for_good(s, checked);
    keep_in(
        s,
        (&settle.ids, &settle.rows),
        &dead,
        now,
        &victims,
        |j, row, at| {
            row.hset(&[
                (l.row.state, l.state.dead),
                (l.row.reason, args.job_bytes(j, 2)),
                (l.row.buried_ms, at),
            ]);
            ring::push(row, (l.row.failures, l.row.failure, FAILURES_KEPT), args.job_bytes(j, 3));
        },
    );
    let reply = settle.done();
    // after `done` wrote `buried`: a parent buried here counts on top
    flows::settled(s, &settle.rows, flows::FAILED, |j| args.job_bytes(j, 2));
    settle.freed(s);
    for (j, &id) in settle.ids.iter().enumerate() {
        let entry = Fields {
            jobs: Some(id),
            reason: Some(args.job_bytes(j, 2)),
            ..blank()
        };
        settle.events.add(l.event.dead, &entry);
    }
    reply
}
