//! The queue's history (`metrics`, a hash; the twin of `lib/lua/history.ts`): what its settles
//! did, per minute — one field per minute (now ÷ 60000), `<acked> <buried> <retried>` — the newest
//! `meta`'s `history_minutes` (absent: a day; 0: none written) kept. A settle adds its count to
//! the current minute; the first settle of a new minute (its field missing, `last` another) deletes
//! the minutes that left the window (from `first`, at most `MAX_HISTORY_MINUTES + 1` of them): O(1)
//! a call, bounded once a minute.

use super::retention::limit;
use super::scope::Scope;
use crate::ffi::{Key, Kind, Str};
use crate::gates;
use crate::keyspace::METRICS;
use crate::literals::lit;
use crate::spec::{
    HISTORY_MINUTES_DEFAULT, HISTORY_MINUTE_MS, LATENCY_BOUNDS_MS, MAX_HISTORY_MINUTES,
};
use crate::wire::Refusal;

/// What a settle counts: its place in a minute's value.
#[derive(Clone, Copy)]
pub enum Tally {
    /// Jobs completed (ACK).
    Acked = 0,
    /// Jobs buried (BURY).
    Buried = 1,
    /// Jobs retried (RETRY).
    Retried = 2,
}

/// The history a settle writes into: `metrics` opened, and the minutes it keeps.
pub struct History<'a> {
    key: Key<'a, 'a>,
    keep: i64,
}

/// Step 5: the queue's history when it keeps one (`meta`'s `history_minutes`, absent: a day, is
/// not 0): `metrics` a hash or missing (else WRONGTYPE; NOPERM when the caller's ACL user may not
/// access it).
pub fn open<'a>(s: &mut Scope<'a>, meta: &Key) -> Result<Option<History<'a>>, Refusal> {
    let keep = if meta.kind() == Kind::Hash {
        limit(meta, lit().meta.history_minutes, HISTORY_MINUTES_DEFAULT)
    } else {
        HISTORY_MINUTES_DEFAULT
    };
    if keep == 0 {
        return Ok(None);
    }
    let key = s.structure(METRICS, Kind::Hash)?;
    Ok(Some(History { key, keep }))
}

/// A minute's value `<acked> <buried> <retried>`, each 1 to 15 digits (else 0 0 0).
fn counts(v: Option<&[u8]>) -> [i64; 3] {
    let parse = |v: &[u8]| -> Option<[i64; 3]> {
        let mut out = [0i64; 3];
        let mut parts = v.split(|&b| b == b' ');
        for slot in &mut out {
            *slot = gates::digits(parts.next()?)? as i64;
        }
        parts.next().is_none().then_some(out)
    };
    v.and_then(parse).unwrap_or([0, 0, 0])
}

/// A latency histogram: a count per bucket of `LATENCY_BOUNDS_MS` and one past them, then the sum (ms).
type Histogram = [i64; LATENCY_BOUNDS_MS.len() + 2];

/// A stored histogram, `<c0> … <c15> <sum>` each 1 to 15 digits (else zeros).
fn histogram(v: Option<&[u8]>) -> Histogram {
    let parse = |v: &[u8]| -> Option<Histogram> {
        let mut out: Histogram = [0; LATENCY_BOUNDS_MS.len() + 2];
        let mut parts = v.split(|&b| b == b' ');
        for slot in &mut out {
            *slot = gates::digits(parts.next()?)? as i64;
        }
        parts.next().is_none().then_some(out)
    };
    v.and_then(parse)
        .unwrap_or([0; LATENCY_BOUNDS_MS.len() + 2])
}

/// One job's `ms` (0 when below) counted in its bucket and the sum.
fn observe(h: &mut Histogram, ms: i64) {
    let ms = ms.max(0);
    let i = LATENCY_BOUNDS_MS
        .iter()
        .position(|&b| ms <= b)
        .unwrap_or(LATENCY_BOUNDS_MS.len());
    h[i] += 1;
    h[LATENCY_BOUNDS_MS.len() + 1] += ms;
}

/// A histogram as stored: its numbers, space-separated.
fn text(h: &Histogram) -> Vec<u8> {
    h.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(" ")
        .into_bytes()
}

impl History<'_> {
    /// Closes its handle until [`reopen`](Self::reopen) (`Key::close`: SETTLE's parts).
    pub fn close(&mut self) {
        self.key.close();
    }

    /// Opens its handle again.
    pub fn reopen(&mut self) {
        self.key.reopen();
    }

    /// Step 6: `n` added to the current minute's `what`, the minutes that left the window deleted
    /// first when the minute has no field yet and `last` is another minute; replicated.
    pub fn add(&self, now: i64, what: Tally, n: i64, latency: &[(i64, i64)]) {
        let (ctx, l) = (self.key.ctx(), lit());
        let key = &self.key;
        let m = now.div_euclid(HISTORY_MINUTE_MS);
        let number = |f: Str| {
            key.hget(f)
                .and_then(|v| gates::digits(v.bytes()).map(|x| x as i64))
        };
        let field = ctx.int(m);
        let value = key.hget(field.as_str());
        // the minute's first settle: the minutes that left the window go (a minute already written
        // skips this read: one HGET and one HSET a settle)
        let last = match value {
            None => number(l.history.last),
            Some(_) => Some(m),
        };
        if last != Some(m) {
            let first = match last {
                Some(last) => {
                    let first = number(l.history.first).unwrap_or(last);
                    let hi = (m - self.keep).min(last);
                    let lo = first.max(hi - MAX_HISTORY_MINUTES);
                    if lo <= hi {
                        let gone: Vec<_> = (lo..=hi).map(|x| ctx.int(x)).collect();
                        let fields: Vec<Str> = gone.iter().map(|x| x.as_str()).collect();
                        key.hdel(&fields);
                    }
                    first.max(m - self.keep + 1)
                }
                None => m,
            };
            let (m_s, first_s) = (ctx.int(m), ctx.int(first));
            key.hset(&[
                (l.history.last, m_s.as_str()),
                (l.history.first, first_s.as_str()),
            ]);
        }
        let mut c = counts(value.as_ref().map(|v| v.bytes()));
        c[what as usize] += n;
        let value = ctx.string(format!("{} {} {}", c[0], c[1], c[2]).as_bytes());
        key.hset(&[(field.as_str(), value.as_str())]);
        if latency.is_empty() {
            return;
        }
        let mut run = histogram(key.hget(l.history.run).as_ref().map(|v| v.bytes()));
        let mut wait = histogram(key.hget(l.history.wait).as_ref().map(|v| v.bytes()));
        for &(claim, ready) in latency {
            observe(&mut run, now - claim);
            if ready > 0 {
                observe(&mut wait, claim - ready);
            }
        }
        let (run, wait) = (ctx.string(&text(&run)), ctx.string(&text(&wait)));
        key.hset(&[
            (l.history.run, run.as_str()),
            (l.history.wait, wait.as_str()),
        ]);
    }
}
