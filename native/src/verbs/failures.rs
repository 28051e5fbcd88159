//! A failed attempt's error kept on its row (RETRY, BURY and SETTLE's parts of them, issue 37.1):
//! the row's `failures` counts the attempts whose worker sent an error, and the newest
//! `FAILURES_KEPT` errors are `failure:0` … `failure:9`, the newest in `failure:<(n − 1) mod 10>`,
//! each written over the oldest. An empty `failure` writes nothing. The Lua twin is `emq_failure`
//! (lib/lua/failures.ts).

use crate::ffi::{Key, Str};
use crate::literals::lit;
use crate::spec::FAILURES_KEPT;

/// Records `failure` (the settle's `failure` argument: the attempt's error) on the open row `row`: `HSET row failures <n>
/// failure:<(n − 1) mod 10> <failure>`, n the row's `failures` + 1 (a `failures` that is not 1 to 15
/// digits counts as 0).
pub fn record(row: &Key, failure: Str) {
    if failure.bytes().is_empty() {
        return;
    }
    let (ctx, l) = (row.ctx(), lit());
    let n = row
        .hget(l.row.failures)
        .and_then(|v| count(v.bytes()))
        .unwrap_or(0)
        + 1;
    let mut name = l.row.failure.bytes().to_vec();
    name.extend(format!(":{}", (n - 1).rem_euclid(FAILURES_KEPT)).as_bytes());
    let field = ctx.string(&name);
    let n = ctx.int(n);
    row.hset(&[(l.row.failures, n.as_str()), (field.as_str(), failure)]);
}

/// `failures` as stored: 1 to 15 ASCII digits, else none.
fn count(v: &[u8]) -> Option<i64> {
    if v.is_empty() || v.len() > 15 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}
