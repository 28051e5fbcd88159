//! Retention of dead and of completed jobs (the twin of `lib/lua/retention.ts`), in two halves so
//! that a verb checks everything before it writes: [`select`] picks the oldest jobs of the set past
//! the queue's `dead_max` / `completed_max` (counting `adding` jobs about to be added) or older than
//! `dead_age_ms` / `completed_age_ms` (`meta`'s fields, else the defaults; [`pick`] with RETAIN's
//! own), at most `TRIM_LIMIT`, as a prefix of the set (score, then member); [`apply`] deletes them.
//! The one difference between the two: `dead_max` 0 is no limit, `completed_max` 0 keeps none (an
//! age of 0 is no limit for both).

use super::flows;
use super::scope::Scope;
use crate::ffi::{Key, Kind, Owned, Str};
use crate::gates;
use crate::literals::lit;
use crate::spec::{
    COMPLETED_AGE_DEFAULT_MS, COMPLETED_MAX_DEFAULT, DEAD_AGE_DEFAULT_MS, DEAD_MAX_DEFAULT,
    TRIM_LIMIT,
};
use crate::wire::Refusal;

/// The set a retention trims.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// `dead` (BURY, CLAIM, RETAIN): `dead_max` 0 is no limit.
    Dead,
    /// `completed` (ACK, CLAIM, RETAIN): `completed_max` 0 keeps none.
    Completed,
}

impl Kept {
    /// The count limit a `max` sets (`None`: no limit).
    pub fn most(self, max: i64) -> Option<i64> {
        match self {
            Kept::Dead => (max > 0).then_some(max),
            Kept::Completed => Some(max),
        }
    }
}

/// The jobs to delete, with their rows.
pub struct Victims<'a> {
    ids: Vec<Owned<'a>>,
    rows: Vec<Owned<'a>>,
}

impl Victims<'_> {
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// A limit of `meta`: its field when it is 1 to 15 digits, else `default`.
pub fn limit(meta: &Key, field: Str, default: i64) -> i64 {
    meta.hget(field)
        .and_then(|v| gates::digits(v.bytes()))
        .map_or(default, |n| n as i64)
}

/// `meta`'s `completed_max` (else the default): how many completed jobs the queue keeps (0: none,
/// ACK deletes the rows).
pub fn completed_max(meta: &Key) -> i64 {
    limit(meta, lit().meta.completed_max, COMPLETED_MAX_DEFAULT)
}

/// The oldest jobs of `set` (`kept`) past the retention `meta` sets (else the defaults).
pub fn select<'a>(
    s: &mut Scope<'a>,
    meta: &Key,
    set: &Key<'a, '_>,
    kept: Kept,
    now: i64,
    adding: i64,
) -> Result<Victims<'a>, Refusal> {
    // an empty set has nothing to trim: its limits are not read
    if set.kind() != Kind::Zset || set.value_len() == 0 {
        return Ok(Victims {
            ids: Vec::new(),
            rows: Vec::new(),
        });
    }
    let l = lit();
    let (max, age) = match kept {
        Kept::Dead => (
            limit(meta, l.meta.dead_max, DEAD_MAX_DEFAULT),
            limit(meta, l.meta.dead_age_ms, DEAD_AGE_DEFAULT_MS),
        ),
        Kept::Completed => (
            completed_max(meta),
            limit(meta, l.meta.completed_age_ms, COMPLETED_AGE_DEFAULT_MS),
        ),
    };
    pick(s, set, now, adding, kept.most(max), age)
}

/// The oldest jobs of `set` past `max` (counting `adding`; `None`: no limit) or older than `age`
/// (0: no limit), their rows opened under the caller's ACL.
pub fn pick<'a>(
    s: &mut Scope<'a>,
    set: &Key<'a, '_>,
    now: i64,
    adding: i64,
    max: Option<i64>,
    age: i64,
) -> Result<Victims<'a>, Refusal> {
    let mut victims = Victims {
        ids: Vec::new(),
        rows: Vec::new(),
    };
    let card = set.value_len() as i64;
    if card == 0 || set.kind() != Kind::Zset {
        return Ok(victims);
    }
    let mut k = max.map_or(0, |max| card + adding - max);
    if age > 0 {
        // older than now - age: a score at most now - age - 1 (scores are whole ms)
        let old = set.due((now - age - 1) as f64, TRIM_LIMIT as u64).len() as i64;
        k = k.max(old);
    }
    let k = k.min(card).min(TRIM_LIMIT);
    if k <= 0 {
        return Ok(victims);
    }
    for id in set.due(f64::INFINITY, k as u64) {
        let row = s.row_of(id.bytes());
        s.open(row.as_str())?;
        victims.ids.push(id);
        victims.rows.push(row);
    }
    Ok(victims)
}

impl Victims<'_> {
    /// How many jobs will be deleted.
    pub fn count(&self) -> usize {
        self.ids.len()
    }
}

/// Deletes `victims` from their set and their rows; replicated. A flow child's row becomes a
/// tombstone ([`flows::leave_tombstone`]): a second delivery of its creation (its relay died
/// between APPLY and UNBOX) finds a row and makes nothing.
pub fn apply(s: &Scope, set: &Key, victims: &Victims) {
    if victims.ids.is_empty() {
        return;
    }
    let ctx = s.ctx;
    let parents: Vec<Option<Owned>> = victims
        .rows
        .iter()
        .map(|row| ctx.open(row.as_str()).hget(lit().row.parent))
        .collect();
    for (id, row) in victims.ids.iter().zip(&victims.rows) {
        set.zrem(id.as_str());
        ctx.open(row.as_str()).delete();
    }
    let mut zrem: Vec<Str> = vec![set.name()];
    zrem.extend(victims.ids.iter().map(Owned::as_str));
    ctx.replicate(c"ZREM", &zrem);
    let del: Vec<Str> = victims.rows.iter().map(Owned::as_str).collect();
    ctx.replicate(c"DEL", &del);
    for (row, parent) in victims.rows.iter().zip(&parents) {
        if let Some(parent) = parent {
            flows::leave_tombstone(s, &ctx.open(row.as_str()), parent.as_str());
        }
    }
}

/// Settled jobs (`ids`, their `rows`) go into `set` (ACK's `completed`, BURY's `dead`) scored
/// `now`, each row written by `row(j, row key, now)`; one `ZADD` replicated, then the set's
/// retention `victims` deleted.
pub fn keep_in(
    s: &Scope,
    (ids, rows): (&[Str], &[Owned]),
    set: &Key,
    now: i64,
    victims: &Victims,
    mut row: impl FnMut(usize, &Key, Str),
) {
    let ctx = s.ctx;
    let now_s = ctx.int(now);
    let mut zadd: Vec<Str> = vec![set.name()];
    for (j, &id) in ids.iter().enumerate() {
        row(j, &ctx.open(rows[j].as_str()), now_s.as_str());
        set.zadd(now as f64, id);
        zadd.push(now_s.as_str());
        zadd.push(id);
    }
    ctx.replicate(c"ZADD", &zadd);
    apply(s, set, victims);
}
