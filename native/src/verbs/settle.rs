//! `EMQ.SETTLE 1 <meta> <lease_ms> <want> (<op> <id> <token> <delay_ms> <reason> <result> <failure>)…`
//! (issue 19 §4): a worker's finished jobs settled and the slots they free claimed again, in one
//! call. Step 5: `meta`, `active`, then each settlement's row (through the scope: ACL, a missing
//! one remembered for the probe; a row of another type is no refusal). Each settlement gets a
//! status on the state before any write: 2 when its id was named by an earlier one of the call, 1
//! when its job is held (its row a hash, its id in active, the row's `token` the call's), else 0.
//! The held ones form one call of their op's verb each — ACK (op 0), RETRY (1), BURY (2), RELEASE
//! (3), each op's settlements in argument order, a part with none skipped — whose checks all run,
//! in that order, before any part writes (the first refusal is SETTLE's, and nothing is written);
//! then each part writes, in the same order, as that verb writes. Then, when want > 0, a CLAIM of
//! up to want jobs with block_ms 0, on a fresh scope (its own probe): refused, it claims nothing
//! and writes nothing, the settlements stand, and next_ms is 0. Reply `[next_ms, [status…], [id,
//! payload, attempts, token, opts]…]`.

use std::collections::HashSet;

use super::scope::Scope;
use super::{ack, bury, claim, release, retry};
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::keyspace::ACTIVE;
use crate::literals::lit;
use crate::wire::Refusal;

/// SETTLE's group: where each argument is.
const OP: usize = 0;
const ID: usize = 1;
const TOKEN: usize = 2;

/// Each op, in the order its part runs, with the SETTLE group arguments that make a group of its
/// verb: ACK `(id token result)`, RETRY `(id token delay_ms reason failure)`, BURY `(id token reason
/// failure)`, RELEASE `(id token)`.
const PARTS: [(i64, &[usize]); 4] = [
    (0, &[1, 2, 5]),
    (1, &[1, 2, 3, 4, 6]),
    (2, &[1, 2, 4, 6]),
    (3, &[1, 2]),
];

/// One part's step 5 done.
enum Checked<'a> {
    Ack(ack::Checked<'a>),
    Retry(retry::Checked<'a>),
    Bury(bury::Checked<'a>),
    Release(release::Checked<'a>),
}

impl<'a> Checked<'a> {
    fn close(&mut self) {
        match self {
            Checked::Ack(c) => c.close(),
            Checked::Retry(c) => c.close(),
            Checked::Bury(c) => c.close(),
            Checked::Release(c) => c.close(),
        }
    }

    /// The part's step 6, its handles opened again on the keyspace the parts before it left.
    fn write(self, s: &Scope<'a>, args: &Args<'a>) {
        match self {
            Checked::Ack(mut c) => {
                c.reopen();
                ack::write(s, args, c);
            }
            Checked::Retry(mut c) => {
                c.reopen();
                retry::write(s, args, c);
            }
            Checked::Bury(mut c) => {
                c.reopen();
                bury::write(s, args, c);
            }
            Checked::Release(mut c) => {
                c.reopen();
                release::write(s, c);
            }
        }
    }
}

/// Runs SETTLE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let (lease, want) = (args.number(0), args.number(1));
    let statuses = statuses(s, args)?;

    // the parts: the held settlements of each op, in argument order, as one call of its verb
    let parts: Vec<(i64, Args<'a>)> = PARTS
        .iter()
        .filter_map(|&(op, fields)| {
            let jobs: Vec<usize> = (0..args.jobs())
                .filter(|&j| statuses[j] == 1 && args.job_number(j, OP) == op)
                .collect();
            (!jobs.is_empty()).then(|| (op, args.part(&jobs, fields)))
        })
        .collect();
    let mut checked = Vec::with_capacity(parts.len());
    for (op, part) in &parts {
        checked.push(match op {
            0 => Checked::Ack(ack::check(s, part)?),
            1 => Checked::Retry(retry::check(s, part)?),
            2 => Checked::Bury(bury::check(s, part)?),
            _ => Checked::Release(release::check(s, part)?),
        });
    }
    s.probe()?;

    // A handle caches the value it found: every part's are closed before the first write and
    // each part's opened again just before its own writes, so none reads a key an earlier part
    // made or deleted through a stale handle.
    for c in &mut checked {
        c.close();
    }
    for (c, (_, part)) in checked.into_iter().zip(&parts) {
        c.write(s, part);
    }

    // the claim, on the state the settlements left; refused, it claims nothing
    let (next_ms, jobs) = if want > 0 {
        s.now();
        let mut fresh = s.fresh();
        match claim::run(&mut fresh, &Args::numbers(&[lease, want, 0])) {
            Ok(Reply::Claimed { next_ms, jobs }) => (next_ms, jobs),
            _ => (0, Vec::new()),
        }
    } else {
        (0, Vec::new())
    };
    Ok(Reply::Settled {
        next_ms,
        statuses,
        jobs,
    })
}

/// Step 5 of the settlements: `meta` (a hash or missing), `active` (a sorted set or missing),
/// then each settlement's row through the scope (its ACL; a missing one remembered), and each
/// one's status on the state before any write: 2 when its id was named by an earlier settlement,
/// 1 when its job is held (as `leases::held` decides it), else 0.
fn statuses(s: &mut Scope, args: &Args) -> Result<Vec<i64>, Refusal> {
    let l = lit();
    s.meta()?;
    let active = s.structure(ACTIVE, Kind::Zset)?;
    let mut seen = HashSet::with_capacity(args.jobs());
    let mut statuses = Vec::with_capacity(args.jobs());
    for j in 0..args.jobs() {
        let id = args.job_bytes(j, ID);
        let name = s.row(id.bytes());
        let row = s.open(name.as_str())?;
        if row.kind() == Kind::Empty {
            s.absent(name.as_str());
        }
        if !seen.insert(id.bytes()) {
            statuses.push(2);
            continue;
        }
        let token = args.job_number(j, TOKEN).to_string();
        let held = row.kind() == Kind::Hash
            && active.zscore(id).is_some()
            && row
                .hget(l.row.token)
                .is_some_and(|t| t.bytes() == token.as_bytes());
        statuses.push(i64::from(held));
    }
    Ok(statuses)
}
