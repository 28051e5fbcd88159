//! `EMQ.EXTEND 1 <meta> <lease_ms> (<id> <token>)…`: each job's lease runs until now + lease_ms.
//! Reply: the count. Jobs not held that CANCEL buried under the call's token refuse it `cancelled`
//! (before `lease-lost`): their worker aborts their handlers.

use super::leases::{held, Leaves};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{self, Kind, Str};
use crate::keyspace::ACTIVE;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs EXTEND's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (settle, [active]) = held(s, args, ([(ACTIVE, Kind::Zset)], false), None, Leaves::Stay)
        .map_err(|e| cancelled(s, args, e))?;

    let field = lit().row.deadline_ms;
    let deadline = ffi::now_ms() + args.number(0);
    let deadline_s = s.ctx.int(deadline);
    let mut zadd: Vec<Str> = vec![active.name()];
    for (j, &id) in settle.ids.iter().enumerate() {
        active.zadd(deadline as f64, id);
        s.ctx
            .open(settle.rows[j].as_str())
            .hset(&[(field, deadline_s.as_str())]);
        zadd.push(deadline_s.as_str());
        zadd.push(id);
    }
    s.ctx.replicate(c"ZADD", &zadd);
    Ok(settle.done())
}

/// A lease-lost refusal of jobs CANCEL buried under the call's token (their rows' `cancelled_ms`
/// set, their `token` the call's) becomes `cancelled`, naming those; any other refusal stays.
fn cancelled(s: &Scope, args: &Args, e: Refusal) -> Refusal {
    let Refusal::LeaseLost(stale) = &e else {
        return e;
    };
    let l = lit();
    let mut ids = Vec::new();
    for j in 0..args.jobs() {
        let id = args.job_bytes(j, 0);
        if !stale.iter().any(|x| x.as_slice() == id.bytes()) {
            continue;
        }
        // (held typed every row and checked the caller's ACL on it)
        let name = s.row(id.bytes());
        let row = s.ctx.open(name.as_str());
        let token = args.job_number(j, 1).to_string();
        let ours = row.kind() == Kind::Hash
            && row.hget(l.row.cancelled_ms).is_some()
            && row.hget(l.row.token).is_some_and(|t| t.bytes() == token.as_bytes());
        if ours {
            ids.push(id.bytes().to_vec());
        }
    }
    if ids.is_empty() {
        e
    } else {
        Refusal::Cancelled(ids)
    }
}
