//! What ACK, RETRY, BURY and EXTEND share (the twin of `lib/lua/leases.ts`): step 5 of a settle.
//! After the types of meta and of the structures the verb writes (opened by the handler, active
//! first), each job's row is type-checked and the job is held when it is in active and its row's
//! `token` is the call's; the verb's meta counter is checked, the cluster probe runs, and only then
//! are the stale jobs refused, every one of them, in argument order.

use super::scope::Scope;
use super::{counter, once};
use crate::command::Args;
use crate::ffi::{lit, Key, Kind, Owned, Str};
use crate::wire::Refusal;

/// The rows of a settle whose every job is held (group arguments 0 and 1: id and token), or the
/// refusal. `total` is the meta counter the verb increments, with its current value returned.
pub fn held<'a>(
    s: &mut Scope<'a>,
    args: &Args<'a>,
    meta: &Key,
    active: &Key,
    total: Option<Str>,
) -> Result<(Vec<Owned<'a>>, i64), Refusal> {
    let l = lit();
    let mut rows = Vec::with_capacity(args.jobs());
    let mut stale = Vec::new();
    for j in 0..args.jobs() {
        let id = args.job_bytes(j, 0);
        let name = s.row(id.bytes());
        let row = s.expect(name.as_str(), Kind::Hash)?;
        let token = args.job_number(j, 1).to_string();
        let ok = row.kind() == Kind::Hash
            && active.zscore(id).is_some()
            && row
                .hget(l.token)
                .is_some_and(|t| t.bytes() == token.as_bytes());
        if !ok {
            stale.push(id.bytes().to_vec());
        }
        drop(row);
        rows.push(name);
    }
    let value = match total {
        Some(field) => counter(meta, field)?,
        None => 0,
    };
    s.probe()?;
    if !stale.is_empty() {
        return Err(Refusal::LeaseLost(stale));
    }
    Ok((rows, value))
}

/// The ids of a settle, none twice.
pub fn ids<'a>(args: &Args<'a>) -> Result<Vec<Str<'a>>, Refusal> {
    let ids = args.ids();
    once(&ids)?;
    Ok(ids)
}
