//! `EMQ.LIMIT 1 <meta> <scope> <lane> <concurrency> <rate_max> <rate_per_ms> <rate_burst>` (the
//! twin of `lib/lua/limit.ts`): a concurrency limit (0: none) and a rate limit (rate_max 0: none)
//! for scope 0 the queue (`meta`'s `concurrency`, `rate`; the lane is not read), 1 the lane `lane`
//! (its state's `concurrency`, `rate`, its `lanes` member made, then its insert and idle checks), 2
//! every lane without its own (`meta`'s `lane_concurrency`, `lane_rate`). `meta` is made if
//! missing; a rate other than the one in force drops its state, so it starts from a full bucket;
//! `ready` on wake when the queue holds ready jobs, and waiting claims told (they try the new
//! limits). Reply: 1.

use super::lanes::{self, Live};
use super::made_now;
use super::mark_ready;
use super::ready;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{Key, Kind, Str};
use crate::keyspace::{PENDING, WAKE};
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
    s.probe()?;

    made_now(&meta);
    match scope {
        0 => set(
            s,
            args,
            &meta,
            [l.meta.concurrency, l.meta.rate, l.meta.tat],
        ),
        1 => {
            let state = ctx.open_named(s.lane(lane.bytes()));
            set(
                s,
                args,
                &state,
                [l.lane.concurrency, l.lane.rate, l.lane.tat],
            );
            drop(state);
            let live = Live::open(s, &meta);
            live.ensure(lane);
            live.checks(lane);
        }
        _ => set(s, args, &meta, [l.meta.lane_concurrency, l.meta.lane_rate]),
    }
    if ready::any(s, &meta) {
        mark_ready(&wake);
        ctx.signal_ready(pending.name());
    }
    Ok(Reply::Int(1))
}

/// The call's limits into `key`'s fields `[concurrency, rate, tat?]`: 0 deletes a field; a rate
/// other than the stored one replaces it and deletes its state (`tat`, when the hash keeps one).
fn set<const N: usize>(s: &Scope, args: &Args, key: &Key, fields: [Str<'static>; N]) {
    let ctx = s.ctx;
    let (conc, max, per, burst) = (
        args.number(2),
        args.number(3),
        args.number(4),
        args.number(5),
    );
    let (concurrency, rate, tat) = (fields[0], fields[1], &fields[2..]);
    if conc == 0 {
        key.hdel(&[concurrency]);
    } else {
        let c = ctx.int(conc);
        key.hset(&[(concurrency, c.as_str())]);
    }
    if max == 0 {
        let mut gone = vec![rate];
        gone.extend_from_slice(tat);
        key.hdel(&gone);
        return;
    }
    let text = ctx.string(format!("{max} {per} {burst}").as_bytes());
    if key.hget(rate).is_none_or(|r| r.bytes() != text.bytes()) {
        key.hset(&[(rate, text.as_str())]);
        if !tat.is_empty() {
            key.hdel(tat);
        }
    }
}
