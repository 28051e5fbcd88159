//! What ENQUEUE and SCHEDULE share (the twin of `lib/lua/admit.ts`): step 5 of an admission — no
//! id twice, no row already there (the first such id is a duplicate) — and the first write, the
//! queue's `meta`: made on first use, the admissions counted.

use super::scope::Scope;
use super::{add, once};
use crate::ffi::{lit, Key, Kind, Owned, Str};
use crate::wire::Refusal;

/// The rows of `ids`, none of which may exist (each opened under the caller's ACL).
pub fn new_rows<'a>(s: &mut Scope<'a>, ids: &[Str<'a>]) -> Result<Vec<Owned<'a>>, Refusal> {
    once(ids)?;
    let mut rows = Vec::with_capacity(ids.len());
    for id in ids {
        let name = s.row(id.bytes());
        if s.open(name.as_str())?.kind() != Kind::Empty {
            return Err(Refusal::Duplicate(id.bytes().to_vec()));
        }
        s.absent(name.as_str());
        rows.push(name);
    }
    Ok(rows)
}

/// `meta` made when missing (`wire 5 created_ms <now>`), then `enqueued` (checked: `value`) + `n`.
pub fn admitted(meta: &Key, now: Str, value: i64, n: usize) {
    let l = lit();
    if meta.kind() == Kind::Empty {
        meta.hset(&[(l.wire, l.wire_value), (l.created_ms, now)]);
    }
    add(meta, l.enqueued, value, n as i64);
}
