//! `EMQ.ENQUEUE 1 <meta> (<id> <payload>)…`: new rows in state `pending`, the ids pushed on the
//! head of pending in argument order; a `ready` marker on wake when pending was empty. Reply: the
//! count.

use super::admit::{admit, admitted};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{self, Kind, Str};
use crate::keyspace::PENDING;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs ENQUEUE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let a = admit(s, args, PENDING, Kind::List)?;
    s.probe()?;

    let (ctx, l) = (s.ctx, lit());
    let now = ctx.int(ffi::now_ms());
    admitted(&a, now.as_str());
    for (j, name) in a.rows.iter().enumerate() {
        ctx.open(name.as_str()).hset(&[
            (l.row.state, l.state.pending),
            (l.row.payload, args.job_bytes(j, 1)),
            (l.row.attempts, l.zero),
            (l.row.created_ms, now.as_str()),
        ]);
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
    Ok(Reply::Int(a.ids.len() as i64))
}
