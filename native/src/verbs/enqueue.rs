//! `EMQ.ENQUEUE 1 <meta> (<id> <opts> <payload>)…`: new rows in state `pending`, the ids pushed on
//! the head of pending in argument order; a `ready` marker on wake when pending was empty. A job
//! whose `dedup` key is held is not admitted (`admit`). Reply: the count, or `[admitted, (place,
//! holder, outcome)…]` when a job carried a key. Its writes ([`pushed`]) are also TICK's: a
//! scheduler's jobs are admitted as ENQUEUE's.

use super::admit::{admit, admitted, fields, Admission};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{Ctx, Kind, Str};
use crate::keyspace::PENDING;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs ENQUEUE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let a = admit(s, args, PENDING, Kind::List, Some(1))?;
    s.probe()?;

    let now = s.ctx.int(a.now);
    admitted(&a, args, now.as_str(), 2, None);
    pushed(s.ctx, &a, now.as_str(), |j| fields(&a, args, j, 2, 1));
    Ok(a.reply())
}

/// Step 6 of an admission into pending (after [`admitted`]): per admitted job `HSET row state
/// pending` with the fields `fields(j)` gives (its payload first), `attempts 0 created_ms <now>`;
/// the ids pushed on the head of pending in order; `ready` on wake when pending was empty and got
/// ids.
pub fn pushed<'b>(
    ctx: Ctx,
    a: &Admission,
    now: Str<'b>,
    fields: impl Fn(usize) -> Vec<(Str<'b>, Str<'b>)>,
) {
    let l = lit();
    for &j in &a.admitted {
        let mut row = vec![(l.row.state, l.state.pending)];
        row.extend(fields(j));
        row.extend([(l.row.attempts, l.zero), (l.row.created_ms, now)]);
        ctx.open(a.rows[j].as_str()).hset(&row);
    }
    let ids = a.admitted_ids();
    if ids.is_empty() {
        return;
    }
    let pending = &a.structure;
    let was_empty = pending.kind() == Kind::Empty;
    for &id in &ids {
        pending.push(false, id);
    }
    let mut push: Vec<Str> = Vec::with_capacity(1 + ids.len());
    push.push(pending.name());
    push.extend(&ids);
    ctx.replicate(c"LPUSH", &push);
    if was_empty {
        a.wake.zadd(0.0, l.wake.ready);
        ctx.replicate(c"ZADD", &[a.wake.name(), l.zero, l.wake.ready]);
    }
}
