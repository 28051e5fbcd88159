//! Retention of dead jobs (the twin of `lib/lua/retention.ts`), in two halves so that a verb checks
//! everything before it writes: [`select`] picks the oldest dead jobs past the queue's `dead_max`
//! (counting `adding` jobs about to be buried) or older than `dead_age_ms` (`meta`'s fields, else
//! the defaults; [`pick`] with RETAIN's own; 0: no limit), at most `TRIM_LIMIT`, as a prefix of the
//! set (score, then member); [`apply`] deletes them.

use super::scope::Scope;
use crate::ffi::{Key, Kind, Owned, Str};
use crate::gates;
use crate::literals::lit;
use crate::spec::{DEAD_AGE_DEFAULT_MS, DEAD_MAX_DEFAULT, TRIM_LIMIT};
use crate::wire::Refusal;

/// The dead jobs to delete, with their rows.
pub struct Victims<'a> {
    ids: Vec<Owned<'a>>,
    rows: Vec<Owned<'a>>,
}

/// A limit of `meta`: its field when it is 1 to 15 digits, else `default`.
fn limit(meta: &Key, field: Str, default: i64) -> i64 {
    meta.hget(field)
        .and_then(|v| gates::digits(v.bytes()))
        .map_or(default, |n| n as i64)
}

/// The oldest dead jobs past the retention `meta` sets (else the defaults).
pub fn select<'a>(
    s: &mut Scope<'a>,
    meta: &Key,
    dead: &Key<'a, '_>,
    now: i64,
    adding: i64,
) -> Result<Victims<'a>, Refusal> {
    let l = lit();
    let max = limit(meta, l.meta.dead_max, DEAD_MAX_DEFAULT);
    let age = limit(meta, l.meta.dead_age_ms, DEAD_AGE_DEFAULT_MS);
    pick(s, dead, now, adding, max, age)
}

/// The oldest dead jobs past `max` (counting `adding`) or older than `age` (0: no limit), their
/// rows opened under the caller's ACL.
pub fn pick<'a>(
    s: &mut Scope<'a>,
    dead: &Key<'a, '_>,
    now: i64,
    adding: i64,
    max: i64,
    age: i64,
) -> Result<Victims<'a>, Refusal> {
    let mut victims = Victims {
        ids: Vec::new(),
        rows: Vec::new(),
    };
    let card = dead.value_len() as i64;
    if card == 0 || dead.kind() != Kind::Zset {
        return Ok(victims);
    }
    let mut k = if max > 0 { card + adding - max } else { 0 };
    if age > 0 {
        // older than now - age: a score at most now - age - 1 (scores are whole ms)
        let old = dead.due((now - age - 1) as f64, TRIM_LIMIT as u64).len() as i64;
        k = k.max(old);
    }
    let k = k.min(card).min(TRIM_LIMIT);
    if k <= 0 {
        return Ok(victims);
    }
    for id in dead.due(f64::INFINITY, k as u64) {
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

/// Deletes `victims` from `dead` and their rows; replicated.
pub fn apply(s: &Scope, dead: &Key, victims: &Victims) {
    if victims.ids.is_empty() {
        return;
    }
    let ctx = s.ctx;
    for (id, row) in victims.ids.iter().zip(&victims.rows) {
        dead.zrem(id.as_str());
        ctx.open(row.as_str()).delete();
    }
    let mut zrem: Vec<Str> = vec![dead.name()];
    zrem.extend(victims.ids.iter().map(Owned::as_str));
    ctx.replicate(c"ZREM", &zrem);
    let del: Vec<Str> = victims.rows.iter().map(Owned::as_str).collect();
    ctx.replicate(c"DEL", &del);
}
