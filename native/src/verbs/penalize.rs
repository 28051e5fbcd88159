//! `EMQ.PENALIZE 1 <meta> <lane> <penalty_ms>` (the twin of `lib/lua/penalize.ts`): lane empty,
//! `meta`'s `parked` becomes now + penalty_ms; else the lane's `parked` (and its score in the
//! `parked` set, its `lanes` member made). A later park in force is kept; `meta` is made if missing.
//! Claims hand out nothing of the queue or lane until then. A `penalized` event says until when
//! (the park in force after the call), with the lane when one. Reply: the park's end.

use super::events::{Events, Fields};
use super::lanes::{Live, State};
use super::limits;
use super::made;
use super::pause::of_lane;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::keyspace::{LANES, PARKED};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs PENALIZE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, lane, l) = (s.ctx, args.bytes(0), lit());
    let meta = s.meta()?;
    s.structure(LANES, Kind::Zset)?;
    let parked = s.structure(PARKED, Kind::Zset)?;
    let events = Events::open(s, &meta)?;
    let state_name = s.lane(lane.bytes());
    let state = if lane.bytes().is_empty() {
        None
    } else {
        Some(s.expect(state_name.as_str(), Kind::Hash)?)
    };
    s.probe()?;
    let now = s.now();
    made(&meta, ctx.int(now).as_str());
    let until = now + args.number(1);
    let until = match state {
        None => match limits::read(&meta).parked.filter(|&p| p >= until) {
            Some(later) => later,
            None => {
                let at = ctx.int(until);
                meta.hset(&[(l.meta.parked, at.as_str())]);
                until
            }
        },
        Some(state) => {
            let until = State::read(&state).parked.map_or(until, |p| p.max(until));
            let at = ctx.int(until);
            state.hset(&[(l.lane.parked, at.as_str())]);
            parked.zadd(until as f64, lane);
            ctx.replicate(c"ZADD", &[parked.name(), at.as_str(), lane]);
            Live::open(s, &meta).ensure(lane);
            until
        }
    };
    let at = ctx.int(until);
    let entry = Fields {
        until: Some(at.as_str()),
        ..of_lane(lane)
    };
    events.add(l.event.penalized, &entry);
    Ok(Reply::Int(until))
}
