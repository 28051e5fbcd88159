//! A bounded list kept in a job's row (issue 37): a count field and the newest `kept` values in
//! the fields `<prefix>:0` … `<prefix>:<kept − 1>`, the newest in `<prefix>:<(n − 1) mod kept>`,
//! each written over the oldest; it goes with the row. A failed attempt's error (RETRY, BURY,
//! SETTLE: `failures`, `failure:`, 10 kept) and a job's log (LOG: `logs`, `log:`, 1000 kept). An
//! empty value writes nothing. The Lua twin is `emq_ring` (lib/lua/ring.ts).

use crate::ffi::{Key, Str};

/// Appends `value` to the open row `row`'s ring: `HSET row <count> <n> <prefix>:<(n − 1) mod kept>
/// <value>`, n the row's `count` + 1 (a count that is not 1 to 15 digits counts as 0).
pub fn push(row: &Key, (count, prefix, kept): (Str, Str, i64), value: Str) {
    if value.bytes().is_empty() {
        return;
    }
    let ctx = row.ctx();
    let n = row.hget(count).and_then(|v| stored(v.bytes())).unwrap_or(0) + 1;
    let mut name = prefix.bytes().to_vec();
    name.extend(format!(":{}", (n - 1).rem_euclid(kept)).as_bytes());
    let field = ctx.string(&name);
    let n = ctx.int(n);
    row.hset(&[(count, n.as_str()), (field.as_str(), value)]);
}

/// A count as stored: 1 to 15 ASCII digits, else none.
fn stored(v: &[u8]) -> Option<i64> {
    if v.is_empty() || v.len() > 15 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}
