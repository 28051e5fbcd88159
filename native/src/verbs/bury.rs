//! `EMQ.BURY 1 <meta> (<id> <token> <reason>)…`: each job goes active → dead at now, its reason
//! kept; then the dead set is trimmed to the queue's retention. One `dead` event per job. Reply:
//! the count.

use super::events::{blank, Fields};
use super::leases::{self, held, leave_active, Leaves};
use super::retention::{self, Kept, Victims};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{Kind, Str};
use crate::keyspace::{ACTIVE, DEAD};
use crate::literals::lit;
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
    let l = lit();
    let structures = [(ACTIVE, Kind::Zset), (DEAD, Kind::Zset)];
    let (settle, keys) = held(
        s,
        args,
        (structures, true),
        Some(l.meta.buried),
        Leaves::Gone,
    )?;
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
    let (ctx, l) = (s.ctx, lit());
    let Checked {
        settle,
        keys: [active, dead],
        with: victims,
    } = checked;
    let now = s.now();
    settle.let_go(now);
    leave_active(s, &settle, &active);
    let now_s = ctx.int(now);
    let mut zadd: Vec<Str> = vec![dead.name()];
    for (j, &id) in settle.ids.iter().enumerate() {
        dead.zadd(now as f64, id);
        ctx.open(settle.rows[j].as_str()).hset(&[
            (l.row.state, l.state.dead),
            (l.row.reason, args.job_bytes(j, 2)),
            (l.row.buried_ms, now_s.as_str()),
        ]);
        zadd.push(now_s.as_str());
        zadd.push(id);
    }
    ctx.replicate(c"ZADD", &zadd);
    let reply = settle.done();
    retention::apply(s, &dead, &victims);
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
