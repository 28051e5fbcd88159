//! `EMQ.PENALIZE 1 <meta> <lane> <penalty_ms>` (the twin of `lib/lua/penalize.ts`): lane empty,
//! `meta`'s `parked` becomes now + penalty_ms; else the lane's `parked` (and its score in the
//! `parked` set, its `lanes` member made). A later park in force is kept; `meta` is made if missing.
//! Claims hand out nothing of the queue or lane until then. Reply: the park's end.

use super::lanes::{Live, State};
use super::limits;
use super::made;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{self, Kind};
use crate::keyspace::{LANES, PARKED};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs PENALIZE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, lane) = (s.ctx, args.bytes(0));
    let meta = s.meta()?;
    s.structure(LANES, Kind::Zset)?;
    let parked = s.structure(PARKED, Kind::Zset)?;
    let state_name = s.lane(lane.bytes());
    let state = if lane.bytes().is_empty() {
        None
    } else {
        Some(s.expect(state_name.as_str(), Kind::Hash)?)
    };
    s.probe()?;
    let now = ffi::now_ms();
    made(&meta, ctx.int(now).as_str());
    let until = now + args.number(1);
    let Some(state) = state else {
        if let Some(parked) = limits::read(&meta).parked.filter(|&p| p >= until) {
            return Ok(Reply::Int(parked));
        }
        let at = ctx.int(until);
        meta.hset(&[(lit().meta.parked, at.as_str())]);
        return Ok(Reply::Int(until));
    };
    let until = State::read(&state).parked.map_or(until, |p| p.max(until));
    let at = ctx.int(until);
    state.hset(&[(lit().lane.parked, at.as_str())]);
    parked.zadd(until as f64, lane);
    ctx.replicate(c"ZADD", &[parked.name(), at.as_str(), lane]);
    Live::open(s, &meta).ensure(lane);
    Ok(Reply::Int(until))
}
