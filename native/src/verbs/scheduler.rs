//! `EMQ.SCHEDULER 1 <meta> <name> <spec> <next_ms> <max_missed> <opts> <payload>`: upserts a
//! scheduler. New: made, first run at next_ms. Same spec: only max_missed, opts and payload change
//! (the next run in force stays: upserting again neither resets nor doubles a tick). Another spec:
//! its next run is next_ms (the client computed it from the new spec). The options of its jobs
//! (`opts`, gated as ENQUEUE's at step 4) are stored as sent, or deleted when empty. Reply: the next
//! run in force.

use super::made;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{self, Kind};
use crate::gates;
use crate::keyspace::SCHEDULERS;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs SCHEDULER's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (name, spec, opts, payload) = (args.bytes(0), args.bytes(1), args.bytes(4), args.bytes(5));
    let meta = s.meta()?;
    let key = s.scheduler(name.bytes());
    let sched = s.expect(key.as_str(), Kind::Hash)?;
    let index = s.structure(SCHEDULERS, Kind::Zset)?;
    s.probe()?;

    let (ctx, l) = (s.ctx, lit().sched);
    let now = ctx.int(ffi::now_ms());
    made(&meta, now.as_str());
    let max_missed = ctx.int(args.number(3));
    let stored = sched.hget(l.spec);
    // the options of its jobs change in place, as its payload does (empty: none)
    if !opts.bytes().is_empty() {
        sched.hset(&[(l.opts, opts)]);
    } else if sched.hget(l.opts).is_some() {
        sched.hdel(&[l.opts]);
    }
    if stored.as_ref().is_some_and(|st| st.bytes() == spec.bytes()) {
        sched.hset(&[(l.max_missed, max_missed.as_str()), (l.payload, payload)]);
        let next = sched.hget(l.next_ms);
        let next = next.and_then(|n| gates::counter(n.bytes()));
        return Ok(Reply::Int(next.unwrap_or_default()));
    }
    let next = ctx.int(args.number(2));
    let mut fields = vec![
        (l.spec, spec),
        (l.next_ms, next.as_str()),
        (l.max_missed, max_missed.as_str()),
        (l.payload, payload),
    ];
    if stored.is_none() {
        fields.extend([(l.runs, lit().zero), (l.created_ms, now.as_str())]);
    }
    sched.hset(&fields);
    index.zadd(args.number(2) as f64, name);
    ctx.replicate(c"ZADD", &[index.name(), next.as_str(), name]);
    Ok(Reply::Int(args.number(2)))
}
