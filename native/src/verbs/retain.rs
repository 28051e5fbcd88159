//! `EMQ.RETAIN 1 <meta> <dead_max> <dead_age_ms> <completed_max> <completed_age_ms> <events_max>
//! <history_minutes>`:
//! the queue's retention of dead jobs (0: no limit), of completed jobs (`completed_max` 0: none
//! kept) and of events (0: none written) in its `meta` (made if missing), applied at once: the
//! oldest dead and completed jobs past it are deleted, at most `TRIM_LIMIT` of each per call, and
//! the events stream is trimmed to `events_max` exactly (0: deleted); `history_minutes` 0 deletes
//! the history (`metrics`). Reply: the jobs deleted.

use super::made;
use super::retention::{self, Kept};
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{Kind, Trim};
use crate::keyspace::{COMPLETED, DEAD, EVENTS, METRICS};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs RETAIN's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (ctx, l) = (s.ctx, lit());
    let meta = s.meta()?;
    let dead = s.structure(DEAD, Kind::Zset)?;
    let completed = s.structure(COMPLETED, Kind::Zset)?;
    let events = s.structure(EVENTS, Kind::Stream)?;
    let metrics = s.structure(METRICS, Kind::Hash)?;
    let now = s.now();
    let values = [0, 1, 2, 3, 4, 5].map(|i| args.number(i));
    let [dead_max, dead_age, completed_max, completed_age, events_max, history] = values;
    let buried = retention::pick(s, &dead, now, 0, Kept::Dead.most(dead_max), dead_age)?;
    let kept = Kept::Completed.most(completed_max);
    let finished = retention::pick(s, &completed, now, 0, kept, completed_age)?;
    s.probe()?;

    made(&meta, ctx.int(now).as_str());
    let texts = values.map(|v| ctx.int(v));
    meta.hset(&[
        (l.meta.dead_max, texts[0].as_str()),
        (l.meta.dead_age_ms, texts[1].as_str()),
        (l.meta.completed_max, texts[2].as_str()),
        (l.meta.completed_age_ms, texts[3].as_str()),
        (l.meta.events_max, texts[4].as_str()),
        (l.meta.history_minutes, texts[5].as_str()),
    ]);
    retention::apply(s, &dead, &buried);
    retention::apply(s, &completed, &finished);
    if events.kind() == Kind::Stream {
        if events_max == 0 {
            events.delete();
            ctx.replicate(c"DEL", &[events.name()]);
        } else if events.stream_trim(events_max, Trim::Exact) > 0 {
            let max = &texts[4];
            ctx.replicate(c"XTRIM", &[events.name(), l.maxlen, max.as_str()]);
        }
    }
    if history == 0 && metrics.kind() == Kind::Hash {
        metrics.delete();
        ctx.replicate(c"DEL", &[metrics.name()]);
    }
    Ok(Reply::Int((buried.count() + finished.count()) as i64))
}
