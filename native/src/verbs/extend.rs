//! `EMQ.EXTEND 1 <meta> <lease_ms> (<id> <token>)…`: each job's lease runs until now + lease_ms.
//! Reply: the count.

use super::leases::{held, Leaves};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{self, Kind, Str};
use crate::keyspace::ACTIVE;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs EXTEND's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (settle, [active]) = held(s, args, ([(ACTIVE, Kind::Zset)], false), None, Leaves::Stay)?;

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
