//! `EMQ.PAUSE 1 <meta> <lane>`: lane empty, the queue's `meta` says `paused 1`; else the lane's
//! state says it (`lane:<lane>`, with its `lanes` member). `meta` is made if missing. Claims hand out
//! nothing of it and waiting claims keep waiting. Reply: 1 when it paused, 0 when it was paused.

use super::lanes::{Live, State};
use super::scope::Scope;
use super::{made_now, paused};
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::keyspace::LANES;
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs PAUSE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let lane = args.bytes(0);
    let meta = s.meta()?;
    s.structure(LANES, Kind::Zset)?;
    if lane.bytes().is_empty() {
        s.probe()?;
        if paused(&meta) {
            return Ok(Reply::Int(0));
        }
        made_now(&meta);
        let one = s.ctx.int(1);
        meta.hset(&[(lit().meta.paused, one.as_str())]);
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
    state.hset(&[(lit().lane.paused, one.as_str())]);
    Live::open(s, &meta).ensure(lane);
    Ok(Reply::Int(1))
}
