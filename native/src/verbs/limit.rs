//! `EMQ.LIMIT 1 <meta> <scope> <lane> <concurrency> <rate_max> <rate_per_ms> <rate_burst>` (the
//! twin of `lib/lua/limit.ts`): a concurrency limit (0: none) and a rate limit (rate_max 0: none)
//! for scope 0 the queue (`meta`'s `concurrency`, `rate`; the lane is not read), 1 the lane `lane`
//! (its state's `concurrency`, `rate`, its `lanes` member made, then its insert and idle checks), 2
//! every lane without its own (`meta`'s `lane_concurrency`, `lane_rate`; in a laned queue every
//! lane then visited: a changed default rate drops the state of the lanes that take it and ends
//! their parks at its next token, then each lane's insert and idle checks). `meta` is made if
//! missing; a rate other than the one in force drops its state, so it starts from a full bucket;
//! a lane's park that state gave ends with it (scope 1: the lane's; scope 2: every parked lane
//! without its own rate, whose state is dropped too: [`rate_parked`]); `ready` on wake when the
//! queue holds ready jobs, and waiting claims told (they try the new limits). Reply: 1.

use super::lanes::{self, Defaults, Live, State};
use super::made_now;
use super::mark_ready;
use super::ready;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{Key, Kind, Owned, Str};
use crate::keyspace::{LANES, PARKED, PENDING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs LIMIT's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let (scope, lane) = (args.number(0), args.bytes(1));
    let meta = s.meta()?;
    let pending = s.structure(PENDING, Kind::List)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    lanes::check(s, [lane.bytes()].into_iter().filter(|_| scope == 1), false)?;
    let every = if scope == 2 { every_lane(s, &meta)? } else { Vec::new() };
    s.probe()?;

    made_now(&meta);
    match scope {
        0 => {
            set(
                s,
                args,
                &meta,
                [l.meta.concurrency, l.meta.rate, l.meta.tat],
            );
        }
        1 => {
            let state = ctx.open_named(s.lane(lane.bytes()));
            let parked = State::read(&state).rate_parked(&Defaults::read(&meta));
            let dropped = set(
                s,
                args,
                &state,
                [l.lane.concurrency, l.lane.rate, l.lane.tat],
            );
            drop(state);
            let live = Live::open(s, &meta);
            live.ensure(lane);
            if parked && dropped {
                unpark(s, &live, lane);
            }
            live.checks(lane);
        }
        _ => {
            // the defaults before the call: a lane parked at the old rate's next token is let go
            let old = Defaults::read(&meta);
            set(s, args, &meta, [l.meta.lane_concurrency, l.meta.lane_rate]);
            let live = Live::open(s, &meta);
            for name in &every {
                live.rebase(name.as_str(), &old);
            }
        }
    }
    if ready::any(s, &meta) {
        mark_ready(&wake);
        ctx.signal_ready(pending.name());
    }
    Ok(Reply::Int(1))
}

/// Step 5 of scope 2 on a laned queue: every lane of `lanes` (each hash typed, with `ring` and
/// `parked`), which step 6 visits ([`Live::rebase`]) so that a raised default reaches the lanes
/// out of the ring (evicted at the old concurrency, parked at the old rate). O(lanes): LIMIT is an
/// operator's verb, never on a claim's path.
fn every_lane<'a>(s: &mut Scope<'a>, meta: &Key) -> Result<Vec<Owned<'a>>, Refusal> {
    if lanes::laned(meta).is_none() {
        return Ok(Vec::new());
    }
    let index = s.structure(LANES, Kind::Zset)?;
    let names = index.due(f64::INFINITY, u64::MAX);
    drop(index);
    lanes::check(s, names.iter().map(Owned::bytes), false)?;
    s.structure(PARKED, Kind::Zset)?;
    Ok(names)
}

/// Ends `lane`'s park, whose rate state is gone (scope 1: [`set`] dropped it; scope 2: dropped
/// here, so it starts from a full bucket of the new default as a lane's own new rate does), then
/// its insert check (`ZREM parked`, `HDEL lane:<lane> tat parked`, replicated).
fn unpark(s: &Scope, live: &Live, lane: Str) {
    let key = s.ctx.open_named(s.lane(lane.bytes()));
    key.hdel(&[lit().lane.tat]);
    drop(key);
    live.unpark(lane);
}

/// The call's rate as stored (`"<max> <per_ms> <burst>"`), `None` for none.
fn rate_text<'a>(s: &Scope<'a>, args: &Args) -> Option<Owned<'a>> {
    let (max, per, burst) = (args.number(3), args.number(4), args.number(5));
    (max != 0).then(|| s.ctx.string(format!("{max} {per} {burst}").as_bytes()))
}

/// The call's limits into `key`'s fields `[concurrency, rate, tat?]`: 0 deletes a field; a rate
/// other than the stored one replaces it and deletes its state (`tat`, when the hash keeps one).
/// Whether the rate was replaced or removed.
fn set<const N: usize>(s: &Scope, args: &Args, key: &Key, fields: [Str<'static>; N]) -> bool {
    let ctx = s.ctx;
    let conc = args.number(2);
    let (concurrency, rate, tat) = (fields[0], fields[1], &fields[2..]);
    if conc == 0 {
        key.hdel(&[concurrency]);
    } else {
        let c = ctx.int(conc);
        key.hset(&[(concurrency, c.as_str())]);
    }
    let Some(text) = rate_text(s, args) else {
        // removed: only a rate that was there (a lane without its own keeps the default's state)
        let had = key.hget(rate).is_some();
        let mut gone = vec![rate];
        gone.extend_from_slice(tat);
        key.hdel(&gone);
        return had;
    };
    if key.hget(rate).is_some_and(|r| r.bytes() == text.bytes()) {
        return false;
    }
    key.hset(&[(rate, text.as_str())]);
    if !tat.is_empty() {
        key.hdel(tat);
    }
    true
}
