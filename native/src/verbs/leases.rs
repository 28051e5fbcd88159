//! What ACK, RETRY, BURY, EXTEND and PROGRESS share (the twin of `lib/lua/leases.ts`'s
//! `emq_leases`): step 5 of a settle — no id twice, the types of meta and of the structures the
//! verb writes (active first), each job's row, the verb's meta counter, the cluster probe, and only
//! then the stale jobs refused, every one of them, in argument order. A job is held when it is in
//! active and its row's `token` is the call's.

use super::scope::Scope;
use super::{counter, once};
use crate::command::Args;
use crate::ffi::{lit, Key, Kind, Owned, Str};
use crate::wire::Refusal;

/// A settle whose every job is held, with what its writes need.
pub struct Settle<'a, const N: usize> {
    /// The jobs' ids (group argument 0), none twice.
    pub ids: Vec<Str<'a>>,
    /// Their rows, in the same order.
    pub rows: Vec<Owned<'a>>,
    /// The queue's `meta`.
    pub meta: Key<'a, 'a>,
    /// The structures asked for, in order (active first).
    pub keys: [Key<'a, 'a>; N],
    /// The current value of the verb's meta counter (0 without one).
    pub total: i64,
}

/// Checks a settle (group arguments 0 and 1: id and token) on the queue's `structures` (type and
/// kind, active first), with `total` the meta counter the verb increments; the jobs held, or the
/// refusal.
pub fn held<'a, const N: usize>(
    s: &mut Scope<'a>,
    args: &Args<'a>,
    structures: [(&[u8], Kind); N],
    total: Option<Str>,
) -> Result<Settle<'a, N>, Refusal> {
    let ids = args.ids();
    once(&ids)?;
    let meta = s.meta()?;
    let mut keys = Vec::with_capacity(N);
    for (ty, kind) in structures {
        keys.push(s.structure(ty, kind)?);
    }
    let keys: [Key<'a, 'a>; N] = keys
        .try_into()
        .unwrap_or_else(|_| unreachable!("N structures"));
    let l = lit();
    let mut rows = Vec::with_capacity(args.jobs());
    let mut stale = Vec::new();
    for j in 0..args.jobs() {
        let id = args.job_bytes(j, 0);
        let name = s.row(id.bytes());
        let row = s.expect(name.as_str(), Kind::Hash)?;
        let token = args.job_number(j, 1).to_string();
        let ok = row.kind() == Kind::Hash
            && keys[0].zscore(id).is_some()
            && row
                .hget(l.token)
                .is_some_and(|t| t.bytes() == token.as_bytes());
        if !ok {
            stale.push(id.bytes().to_vec());
        }
        drop(row);
        rows.push(name);
    }
    let total = match total {
        Some(field) => counter(&meta, field)?,
        None => 0,
    };
    s.probe()?;
    if !stale.is_empty() {
        return Err(Refusal::LeaseLost(stale));
    }
    Ok(Settle {
        ids,
        rows,
        meta,
        keys,
        total,
    })
}

/// The settled jobs leave active: `ZREM active <ids…>`, replicated.
pub fn leave_active(active: &Key, ids: &[Str]) {
    for &id in ids {
        active.zrem(id);
    }
    let mut zrem: Vec<Str> = vec![active.name()];
    zrem.extend(ids);
    active.ctx().replicate(c"ZREM", &zrem);
}
