//! `EMQ.RESUME 1 <meta> <lane>`: lane empty, `paused` leaves the queue's `meta` and a `ready`
//! marker goes on wake when the queue holds ready jobs; else `paused` leaves the lane's state, then
//! its insert and idle checks (`lanes`). Waiting claims are woken. Reply: 1 when it resumed, 0
//! when it was not paused. When it resumed, a `resumed` event (with the lane, when one).

use super::events::Events;
use super::lanes::{self, Live, State};
use super::mark_ready;
use super::pause::of_lane;
use super::paused;
use super::ready;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::keyspace::{PENDING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs RESUME's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let lane = args.bytes(0);
    let meta = s.meta()?;
    let pending = s.structure(PENDING, Kind::List)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    let events = Events::open(s, &meta)?;
    lanes::check(
        s,
        [lane.bytes()].into_iter().filter(|n| !n.is_empty()),
        false,
    )?;
    s.probe()?;
    if !lane.bytes().is_empty() {
        let state = ctx.open_named(s.lane(lane.bytes()));
        if !State::read(&state).paused {
            return Ok(Reply::Int(0));
        }
        state.hdel(&[l.lane.paused]);
        drop(state);
        let live = Live::open(s, &meta);
        live.checks(lane);
        // the lane put in the empty ring: `ready`, as every insert there writes it
        if live.filled() {
            mark_ready(&wake);
        }
        events.add(l.event.resumed, &of_lane(lane));
        return Ok(Reply::Int(1));
    }
    if !paused(&meta) {
        return Ok(Reply::Int(0));
    }
    meta.hdel(&[l.meta.paused]);
    if ready::any(s, &meta) {
        mark_ready(&wake);
    }
    ctx.signal_ready(pending.name());
    events.add(l.event.resumed, &of_lane(lane));
    Ok(Reply::Int(1))
}
