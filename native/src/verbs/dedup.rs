//! Deduplication (the twin of `lib/lua/dedup.ts`): the queue's `dedup` hash (key → `<id>
//! <until_ms>`) and `dedup_ttl` sorted set (keys whose job settled before their window ended). An
//! admission asks [`holder`] whether a key is held; a job that leaves for good lets its key go
//! ([`letting_go`] checks, [`let_go`] writes); CLAIM drops the windows that ended ([`expired`],
//! [`drop_expired`]). Docs: docs/WIRE.md, "Deduplication".

use super::scope::Scope;
use crate::ffi::{Ctx, Key, Kind, Owned, Str};
use crate::keyspace::{DEDUP, DEDUP_TTL};
use crate::literals::lit;
use crate::options;
use crate::spec::CLAIM_MOVE_LIMIT;
use crate::wire::Refusal;

/// The queue's two deduplication keys, opened (ACL) and type-checked, a missing one remembered.
pub struct Dedup<'a> {
    /// `dedup`: key → `<id> <until_ms>`.
    pub hash: Key<'a, 'a>,
    /// `dedup_ttl`: key → its window's end, for keys whose job settled.
    pub ttl: Key<'a, 'a>,
}

/// Opens `dedup` (hash) then `dedup_ttl` (sorted set).
pub fn open<'a>(s: &mut Scope<'a>) -> Result<Dedup<'a>, Refusal> {
    let hash = s.structure(DEDUP, Kind::Hash)?;
    let ttl = s.structure(DEDUP_TTL, Kind::Zset)?;
    Ok(Dedup { hash, ttl })
}

impl Dedup<'_> {
    /// Closes both handles (`Key::close`), until [`reopen`](Self::reopen).
    pub fn close(&mut self) {
        self.hash.close();
        self.ttl.close();
    }

    /// Opens both handles again, on the keyspace as it is now.
    pub fn reopen(&mut self) {
        self.hash.reopen();
        self.ttl.reopen();
    }
}

/// A `dedup` entry, `<id> <until_ms>`: the id and the window's end; `None` when malformed.
pub fn entry(value: &[u8]) -> Option<(&[u8], i64)> {
    let at = value.iter().position(|&b| b == b' ')?;
    let (id, until) = (&value[..at], &value[at + 1..]);
    if id.is_empty() || id.contains(&b' ') {
        return None;
    }
    let until = crate::gates::digits(until)?;
    Some((id, until as i64))
}

/// The job holding a key.
pub struct Holder<'a> {
    /// Its id.
    pub id: Owned<'a>,
    /// Its row.
    pub row: Owned<'a>,
    /// Whether it still waits (pending or scheduled): a debounced admission folds into it.
    pub waiting: bool,
    /// Whether it is scheduled: a debounced SCHEDULE moves its due time.
    pub scheduled: bool,
    /// Whether it runs (active): a debounced admission does not fold into it, but takes the key.
    pub active: bool,
}

/// The job holding `key`; `None` when the key is free — no entry, or its job is gone, dead or never
/// was and its window has ended. The holder's row is opened (ACL) and type-checked, its absence
/// remembered.
pub fn holder<'a>(
    s: &mut Scope<'a>,
    d: &Dedup,
    key: &[u8],
    now: i64,
) -> Result<Option<Holder<'a>>, Refusal> {
    let ctx = s.ctx;
    let Some(value) = d.hash.hget(ctx.string(key).as_str()) else {
        return Ok(None);
    };
    let Some((id, until)) = entry(value.bytes()) else {
        return Ok(None);
    };
    let row = s.row_of(id);
    let state = s.expect(row.as_str(), Kind::Hash)?.hget(lit().row.state);
    let l = lit();
    let is = |want: Str| state.as_ref().is_some_and(|s| s.bytes() == want.bytes());
    let scheduled = is(l.state.scheduled);
    let waiting = scheduled || is(l.state.pending);
    let active = is(l.state.active);
    if waiting || active || now < until {
        let id = ctx.string(id);
        return Ok(Some(Holder {
            id,
            row,
            waiting,
            scheduled,
            active,
        }));
    }
    Ok(None)
}

/// Step 6 of an admission that takes `key` for job `id`: `HSET dedup key "<id> <until>"`, and the
/// key leaves `dedup_ttl`; replicated.
pub fn take(ctx: Ctx, d: &Dedup, key: &[u8], id: Str, until: i64) {
    let key = ctx.string(key);
    let mut value = id.bytes().to_vec();
    value.push(b' ');
    value.extend_from_slice(until.to_string().as_bytes());
    let value = ctx.string(&value);
    d.hash.hset(&[(key.as_str(), value.as_str())]);
    if d.ttl.kind() == Kind::Zset && d.ttl.zrem(key.as_str()) {
        ctx.replicate(c"ZREM", &[d.ttl.name(), key.as_str()]);
    }
}

/// Jobs leaving for good that hold keys: the deduplication keys, and each (key, id).
pub struct Going<'a> {
    /// The queue's deduplication keys.
    pub d: Dedup<'a>,
    /// Each key a leaving job was admitted under, with that job's id.
    pub keys: Vec<(Vec<u8>, Vec<u8>)>,
}

/// Step 5 of jobs leaving for good (ACK, BURY, REMOVE): each existing row's `dedup` key, in
/// argument order, with the job's id; when any, the deduplication keys opened.
pub fn letting_go<'a>(
    s: &mut Scope<'a>,
    jobs: &[(Str<'a>, Str<'_>)],
) -> Result<Option<Going<'a>>, Refusal> {
    let ctx = s.ctx;
    let mut keys = Vec::new();
    for &(id, row) in jobs {
        let row = ctx.open(row);
        if row.kind() != Kind::Hash {
            continue;
        }
        let Some(opts) = row.hget(lit().row.opts) else {
            continue;
        };
        if let Some(key) = options::parse(opts.bytes())
            .ok()
            .and_then(|o| o.bytes("dedup"))
        {
            keys.push((key.to_vec(), id.bytes().to_vec()));
        }
    }
    if keys.is_empty() {
        return Ok(None);
    }
    Ok(Some(Going { d: open(s)?, keys }))
}

/// Step 6 of [`letting_go`]: each key still naming its job is deleted when its window has ended,
/// else kept until then and listed in `dedup_ttl`; replicated.
pub fn let_go(ctx: Ctx, going: &Going, now: i64) {
    let d = &going.d;
    for (key, id) in &going.keys {
        let key = ctx.string(key);
        let Some(value) = d.hash.hget(key.as_str()) else {
            continue;
        };
        match entry(value.bytes()) {
            Some((holder, until)) if holder == id.as_slice() => {
                if until > now {
                    d.ttl.zadd(until as f64, key.as_str());
                    let at = ctx.int(until);
                    ctx.replicate(c"ZADD", &[d.ttl.name(), at.as_str(), key.as_str()]);
                } else {
                    d.hash.hdel(&[key.as_str()]);
                }
            }
            _ => {}
        }
    }
}

/// Step 5 of CLAIM's upkeep: the keys of `dedup_ttl` whose window has ended (at most
/// `CLAIM_MOVE_LIMIT`), with `dedup` opened when there are any. `dedup_ttl` is opened (ACL) and
/// type-checked but its absence not remembered: a claim that finds none drops none.
pub fn expired<'a>(
    s: &mut Scope<'a>,
    now: i64,
) -> Result<Option<(Dedup<'a>, Vec<Owned<'a>>)>, Refusal> {
    let name = s.name(DEDUP_TTL);
    let ttl = s.open(name.as_str())?;
    if !ttl.is_empty_or(Kind::Zset) {
        return Err(Refusal::Wrongtype);
    }
    if ttl.kind() == Kind::Empty || ttl.first_score().is_none_or(|f| f as i64 > now) {
        return Ok(None);
    }
    drop(ttl);
    let d = open(s)?;
    let keys = d.ttl.due(now as f64, CLAIM_MOVE_LIMIT);
    Ok(Some((d, keys)))
}

/// Step 6 of [`expired`]: `HDEL dedup <keys…>`, `ZREM dedup_ttl <keys…>`; replicated.
pub fn drop_expired(ctx: Ctx, d: &Dedup, keys: &[Owned]) {
    let names: Vec<Str> = keys.iter().map(Owned::as_str).collect();
    d.hash.hdel(&names);
    for &k in &names {
        d.ttl.zrem(k);
    }
    let mut zrem = vec![d.ttl.name()];
    zrem.extend(&names);
    ctx.replicate(c"ZREM", &zrem);
}

#[cfg(test)]
mod tests {
    use super::entry;

    #[test]
    fn entries() {
        assert_eq!(
            entry(b"JOB00000000001 0"),
            Some((&b"JOB00000000001"[..], 0))
        );
        assert_eq!(
            entry(b"JOB1 1700000000000"),
            Some((&b"JOB1"[..], 1_700_000_000_000))
        );
        assert_eq!(entry(b"JOB1"), None);
        assert_eq!(entry(b" 5"), None);
        assert_eq!(entry(b"JOB1 x"), None);
        assert_eq!(entry(b"JOB1 5 6"), None);
    }
}
