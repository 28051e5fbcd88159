//! The queue's limits (the twin of `lib/lua/limits.ts`): reading `meta`'s `concurrency`, `rate`,
//! `tat` and `parked` (a stored value that LIMIT or CLAIM would not have written counts as
//! absent), the generic cell-rate algorithm in exact integers (docs/WIRE.md, "Limits"), and the
//! wake a settle gives when it frees a slot of a limited queue. The reading and the arithmetic are
//! pure and unit-tested; `freeing` and `freed` are a settle's step 5 and last write.

use super::mark_ready;
use super::scope::Scope;
use crate::ffi::{Key, Kind};
use crate::gates;
use crate::keyspace::{PENDING, WAKE};
use crate::literals::lit;
use crate::spec::{MAX_BURST, MAX_CONCURRENCY, MAX_RATE, MAX_RATE_PERIOD_MS};
use crate::wire::Refusal;

/// Largest stored time (15 digits, as the wire's numbers).
const MAX_STORED: i64 = 999_999_999_999_999;

/// A rate limit: `max` claims per `per` ms on average, at most `burst` at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Claims per period.
    pub max: i64,
    /// The period, in ms.
    pub per: i64,
    /// The most claims at once after an idle period.
    pub burst: i64,
}

/// A rate limit's state: the theoretical arrival time is `q + r / max` ms (0 ≤ r < max).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Tat {
    /// Whole ms.
    pub q: i64,
    /// The fraction, in `max`ths of a ms.
    pub r: i64,
}

/// A queue's limits, each `None` when absent or not as the verbs write it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Limits {
    /// The most jobs active at once.
    pub conc: Option<i64>,
    /// The rate limit and its state (absent: a full bucket).
    pub rate: Option<(Rate, Option<Tat>)>,
    /// Claims hand out nothing until this time.
    pub parked: Option<i64>,
}

/// A stored decimal of 1 to 15 digits within `lo..=hi`.
pub fn stored(text: Option<&[u8]>, lo: i64, hi: i64) -> Option<i64> {
    let n = i64::try_from(gates::digits(text?)?).ok()?;
    (lo..=hi).contains(&n).then_some(n)
}

/// `text` split at single spaces into exactly `N` parts (no allocation: a claim parses up to
/// three of these).
fn parts<const N: usize>(text: Option<&[u8]>) -> Option<[&[u8]; N]> {
    let mut it = text?.split(|&b| b == b' ');
    let mut out: [&[u8]; N] = [&[]; N];
    for part in &mut out {
        *part = it.next()?;
    }
    it.next().is_none().then_some(out)
}

/// A stored concurrency limit (1 to `MAX_CONCURRENCY`).
pub fn parse_conc(text: Option<&[u8]>) -> Option<i64> {
    stored(text, 1, MAX_CONCURRENCY)
}

/// A stored rate `"<max> <per_ms> <burst>"`.
pub fn parse_rate(text: Option<&[u8]>) -> Option<Rate> {
    let [m, p, b] = parts::<3>(text)?;
    Some(Rate {
        max: stored(Some(m), 1, MAX_RATE)?,
        per: stored(Some(p), 1, MAX_RATE_PERIOD_MS)?,
        burst: stored(Some(b), 1, MAX_BURST)?,
    })
}

/// A stored rate state `"<q> <r>"` of `rate` (0 ≤ r < max).
pub fn parse_tat(text: Option<&[u8]>, rate: &Rate) -> Option<Tat> {
    let [q, r] = parts::<2>(text)?;
    Some(Tat {
        q: stored(Some(q), 0, MAX_STORED)?,
        r: stored(Some(r), 0, rate.max - 1)?,
    })
}

/// A stored time (ms since the epoch).
pub fn parse_time(text: Option<&[u8]>) -> Option<i64> {
    stored(text, 0, MAX_STORED)
}

/// The limits `meta`'s fields say (the stored bytes of `concurrency`, `parked`, `rate`, `tat`).
pub fn parse(
    conc: Option<&[u8]>,
    parked: Option<&[u8]>,
    rate: Option<&[u8]>,
    tat: Option<&[u8]>,
) -> Limits {
    Limits {
        conc: parse_conc(conc),
        rate: parse_rate(rate).map(|r| (r, parse_tat(tat, &r))),
        parked: parse_time(parked),
    }
}

/// The queue's concurrency limit, read from `meta` (a settle needs no other limit).
pub fn concurrency(meta: &Key) -> Option<i64> {
    if meta.kind() != Kind::Hash {
        return None;
    }
    let c = meta.hget(lit().meta.concurrency);
    parse_conc(c.as_ref().map(|s| s.bytes()))
}

/// The queue's limits, read from `meta` (none when it is missing).
pub fn read(meta: &Key) -> Limits {
    if meta.kind() != Kind::Hash {
        return Limits::default();
    }
    let l = lit();
    let get = |f| meta.hget(f);
    let (c, p, r, t) = (
        get(l.meta.concurrency),
        get(l.meta.parked),
        get(l.meta.rate),
        get(l.meta.tat),
    );
    parse(
        c.as_ref().map(|s| s.bytes()),
        p.as_ref().map(|s| s.bytes()),
        r.as_ref().map(|s| s.bytes()),
        t.as_ref().map(|s| s.bytes()),
    )
}

impl Rate {
    /// The tokens at `now` and the state they count from: max(TAT, now).
    pub fn tokens(&self, tat: Option<Tat>, now: i64) -> (i64, Tat) {
        let t = tat.unwrap_or_default();
        let base = if t.q > now || (t.q == now && t.r > 0) {
            t
        } else {
            Tat { q: now, r: 0 }
        };
        // i128: a stored q far in the future makes (now − q)·max past i64 (the Lua twin's double
        // is inexact there but as negative, so both count no token)
        let num = i128::from(now - base.q) * i128::from(self.max) - i128::from(base.r)
            + i128::from(self.burst) * i128::from(self.per);
        let n = if num > 0 {
            (num / i128::from(self.per)).min(i128::from(self.burst)) as i64
        } else {
            0
        };
        (n, base)
    }

    /// The state after `k` tokens are taken from `t`: TAT + k · per / max.
    pub fn take(&self, t: Tat, k: i64) -> Tat {
        let s = t.r + k * self.per;
        Tat {
            q: t.q + s / self.max,
            r: s % self.max,
        }
    }

    /// When the next token comes, from state `t` with none left: q + ⌈(r − (burst − 1) · per) / max⌉.
    pub fn next_token(&self, t: Tat) -> i64 {
        let x = t.r - (self.burst - 1) * self.per;
        t.q - (-x).div_euclid(self.max)
    }
}

/// A settle's step 5 on a queue with a concurrency limit: the types of pending and wake, which
/// [`freed`] reads and writes (missing ones remembered for the probe). Whether it will wake.
pub fn freeing(s: &mut Scope, meta: &Key) -> Result<bool, Refusal> {
    if concurrency(meta).is_none() {
        return Ok(false);
    }
    s.structure(PENDING, Kind::List)?;
    s.structure(WAKE, Kind::Zset)?;
    Ok(true)
}

/// A settle's last write on a queue with a concurrency limit: a slot is free, so `ready` on wake
/// while the queue holds ready jobs, and waiting claims told.
pub fn freed(s: &Scope, meta: &Key, freeing: bool) {
    if !freeing || !super::ready::any(s, meta) {
        return;
    }
    let wake = s.ctx.open_named(s.name(WAKE));
    mark_ready(&wake);
    s.ctx.signal_ready(s.name(PENDING).as_str());
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Rate = Rate {
        max: 3,
        per: 1000,
        burst: 1,
    };

    /// The bucket of `r`, full at time 0: its tokens, and the state once they are all taken.
    fn drained(r: Rate) -> (i64, Tat) {
        let (n, base) = r.tokens(None, 0);
        (n, r.take(base, n))
    }

    #[test]
    fn parses_what_the_verbs_write() {
        let l = parse(Some(b"2"), Some(b"17"), Some(b"3 1000 1"), Some(b"5 2"));
        assert_eq!(l.conc, Some(2));
        assert_eq!(l.parked, Some(17));
        assert_eq!(l.rate, Some((R, Some(Tat { q: 5, r: 2 }))));
        // anything else counts as absent
        assert_eq!(parse(Some(b"0"), None, None, None).conc, None);
        assert_eq!(parse(Some(b"1000001"), None, None, None).conc, None);
        assert_eq!(parse(None, Some(b"-1"), None, None).parked, None);
        assert_eq!(parse(None, None, Some(b"3 1000"), None).rate, None);
        assert_eq!(parse(None, None, Some(b"3  1000 1"), None).rate, None);
        assert_eq!(parse(None, None, Some(b"0 1000 1"), None).rate, None);
        assert_eq!(
            parse(None, None, Some(b"3 1000 1"), Some(b"5 3")).rate,
            Some((R, None))
        );
        assert_eq!(
            parse(None, None, Some(b"3 1000 1"), Some(b"5")).rate,
            Some((R, None))
        );
    }

    #[test]
    fn an_idle_bucket_is_full() {
        let b = Rate { burst: 4, ..R };
        assert_eq!(b.tokens(None, 100), (4, Tat { q: 100, r: 0 }));
        assert_eq!(b.tokens(Some(Tat { q: 50, r: 2 }), 100).0, 4);
    }

    #[test]
    fn evenly_spaced_at_burst_one() {
        // 3 per 1000 ms: one claim every 333⅓ ms, never 2× at a window's edge
        let (n, t) = drained(R);
        assert_eq!((n, t), (1, Tat { q: 333, r: 1 }));
        assert_eq!(R.tokens(Some(t), 333).0, 0);
        assert_eq!(R.next_token(t), 334);
        assert_eq!(R.tokens(Some(t), 334).0, 1);
        let t = R.take(R.tokens(Some(t), 334).1, 1);
        // from now = 334 (the claim came later than its TAT): 334 + 333⅓
        assert_eq!(t, Tat { q: 667, r: 1 });
        assert_eq!(R.next_token(t), 668);
        // over 10 s: exactly 30 (+1 at t=0)
        let (mut t, mut got) = (None, 0);
        for now in 0..10_000 {
            let (n, base) = R.tokens(t, now);
            if n > 0 {
                got += 1;
                t = Some(R.take(base, 1));
            }
        }
        assert_eq!(got, 30);
    }

    #[test]
    fn a_burst_then_the_rate() {
        let b = Rate {
            max: 10,
            per: 1000,
            burst: 5,
        };
        let (n, t) = drained(b);
        assert_eq!((n, t), (5, Tat { q: 500, r: 0 }));
        assert_eq!(b.tokens(Some(t), 99).0, 0);
        assert_eq!(b.next_token(t), 100);
        assert_eq!(b.tokens(Some(t), 100).0, 1);
        assert_eq!(b.tokens(Some(t), 500).0, 5);
    }

    #[test]
    fn far_future_state_counts_nothing() {
        let t = Some(Tat {
            q: MAX_STORED,
            r: 0,
        });
        assert_eq!(R.tokens(t, 1_700_000_000_000).0, 0);
    }
}
