//! `EMQ.RELEASE 1 <meta> (<id> <token>)…`: a hand-back, not a failure — each held job goes active
//! → the tail of pending (claimed next) and its row's `attempts` gives back the attempt its claim
//! counted; `ready` on wake when pending was empty, and waiting claims told; one `released` event
//! names them. Reply: the count.

use super::counter;
use super::leases::{self, held, leave_active, Leaves};
use super::mark_ready;
use super::ready;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::keyspace::{ACTIVE, PENDING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs RELEASE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let checked = check(s, args)?;
    Ok(write(s, checked))
}

/// RELEASE's step 5 done: the jobs held, its structures, and what else its writes need.
pub type Checked<'a> = leases::Checked<'a, 3, (Vec<i64>, ready::Plan<'a>)>;

/// RELEASE's step 5: every check, nothing written.
pub fn check<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Checked<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let structures = [
        (ACTIVE, Kind::Zset),
        (PENDING, Kind::List),
        (WAKE, Kind::Zset),
    ];
    let (settle, keys) = held(s, args, (structures, true), None, Leaves::Active)?;
    let mut attempts = Vec::with_capacity(settle.rows.len());
    for row in &settle.rows {
        attempts.push(counter(&ctx.open(row.as_str()), l.row.attempts)?);
    }
    let exists = vec![true; settle.ids.len()];
    let plan = ready::plan_rows(s, &settle.meta, &settle.ids, &settle.rows, &exists)?;
    s.probe()?;
    Ok(Checked {
        settle,
        keys,
        with: (attempts, plan),
    })
}

/// RELEASE's step 6, after [`check`]: every write, and the reply.
pub fn write<'a>(s: &Scope<'a>, checked: Checked<'a>) -> Reply<'a> {
    let (ctx, l) = (s.ctx, lit());
    let Checked {
        settle,
        keys: [active, pending, wake],
        with: (attempts, plan),
    } = checked;
    let was_empty = !ready::any(s, &settle.meta);
    leave_active(s, &settle, &active);
    ready::push(s, &settle.meta, &pending, &plan, true);
    for (row, a) in settle.rows.iter().zip(&attempts) {
        let left = ctx.int(a - 1);
        ctx.open(row.as_str()).hset(&[
            (l.row.state, l.state.pending),
            (l.row.attempts, left.as_str()),
        ]);
    }
    if was_empty {
        mark_ready(&wake);
    }
    ctx.signal_ready(pending.name());
    settle.freed(s);
    let reply = settle.done();
    let released = settle.ids.iter().map(|id| id.bytes());
    settle.events.jobs(l.event.released, released);
    reply
}
