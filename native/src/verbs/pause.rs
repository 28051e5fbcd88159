//! `EMQ.PAUSE 1 <meta> <lane>`: lane empty, the queue's `meta` says `paused 1`; else the lane's
//! state says it (`lane:<lane>`, with its `lanes` member). `meta` is made if missing. Claims hand out
//! nothing of it and waiting claims keep waiting. When it paused, a `paused` event (with the lane,
//! when one). Reply: 1 when it paused, 0 when it was paused.

use super::events::{blank, Events, Fields};
use super::lanes::{Live, State};
use super::scope::Scope;
use super::{made_now, paused};
use crate::command::{Args, Reply};
use crate::ffi::{Kind, Str};
use crate::keyspace::LANES;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs PAUSE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (lane, l) = (args.bytes(0), lit());
    let meta = s.meta()?;
    s.structure(LANES, Kind::Zset)?;
    let events = Events::open(s, &meta)?;
    if lane.bytes().is_empty() {
        s.probe()?;
        if paused(&meta) {
            return Ok(Reply::Int(0));
        }
        made_now(&meta);
        let one = s.ctx.int(1);
        meta.hset(&[(l.meta.paused, one.as_str())]);
        events.add(l.event.paused, &of_lane(lane));
        return Ok(Reply::Int(1));
    }
    let name = s.lane(lane.bytes());
    let state = s.expect(name.as_str(), Kind::Hash)?;
    s.probe()?;
    if State::read(&state).paused {
        return Ok(Reply::Int(0));
    }
    made_now(&meta);
    let one = s.ctx.int(1);
    state.hset(&[(l.lane.paused, one.as_str())]);
    Live::open(s, &meta).ensure(lane);
    events.add(l.event.paused, &of_lane(lane));
    Ok(Reply::Int(1))
}

/// An entry's `lane`: the lane named, none for the queue (an empty lane).
pub fn of_lane(lane: Str) -> Fields {
    Fields {
        lane: (!lane.bytes().is_empty()).then_some(lane),
        ..blank()
    }
}
