//! `EMQ.ENQUEUE 1 <meta> (<id> <payload>)…`: new rows in state `pending`, the ids pushed on the
//! head of pending in argument order; a `ready` marker on wake when pending was empty. Reply: the
//! count. Its writes ([`pushed`]) are also TICK's: a scheduler's jobs are admitted as ENQUEUE's.

use super::admit::{admit, admitted, Admission};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{self, Ctx, Kind, Str};
use crate::keyspace::PENDING;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs ENQUEUE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let a = admit(s, args, PENDING, Kind::List)?;
    s.probe()?;

    let now = s.ctx.int(ffi::now_ms());
    pushed(s.ctx, &a, now.as_str(), |j| {
        vec![(lit().row.payload, args.job_bytes(j, 1))]
    });
    Ok(Reply::Int(a.ids.len() as i64))
}

/// Step 6 of an admission into pending: `meta` made and counted; per job `HSET row state pending
/// attempts 0 created_ms <now>` and the fields `fields(j)` gives (its payload first); the ids
/// pushed on the head of pending in order; `ready` on wake when pending was empty and got ids.
pub fn pushed<'b>(
    ctx: Ctx,
    a: &Admission,
    now: Str<'b>,
    fields: impl Fn(usize) -> Vec<(Str<'b>, Str<'b>)>,
) {
    let l = lit();
    admitted(a, now);
    for (j, name) in a.rows.iter().enumerate() {
        let mut row = vec![(l.row.state, l.state.pending)];
        row.extend(fields(j));
        row.extend([(l.row.attempts, l.zero), (l.row.created_ms, now)]);
        ctx.open(name.as_str()).hset(&row);
    }
    if a.ids.is_empty() {
        return;
    }
    let pending = &a.structure;
    let was_empty = pending.kind() == Kind::Empty;
    for &id in &a.ids {
        pending.push(false, id);
    }
    let mut push: Vec<Str> = Vec::with_capacity(1 + a.ids.len());
    push.push(pending.name());
    push.extend(&a.ids);
    ctx.replicate(c"LPUSH", &push);
    if was_empty {
        a.wake.zadd(0.0, l.wake.ready);
        ctx.replicate(c"ZADD", &[a.wake.name(), l.zero, l.wake.ready]);
    }
}
