//! `EMQ.DROP 1 <meta> <limit>`: the queue is deleted, up to limit schedulers and jobs a call
//! (schedulers, then pending, scheduled and dead jobs), and once none is left every key of
//! the queue, `meta` included; refused while a job is active (naming up to 50 of them). Reply: the
//! schedulers and jobs deleted (fewer than limit: the queue is gone).

use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{Key, Kind, Owned, Str};
use crate::keyspace::{ACTIVE, DEAD, DEDUP, DEDUP_TTL, PENDING, SCHEDULE, SCHEDULERS, WAKE};
use crate::wire::Refusal;

/// Runs DROP's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let ctx = s.ctx;
    let limit = args.number(0) as usize;
    let meta = s.meta()?;
    let pending = s.structure(PENDING, Kind::List)?;
    let schedule = s.structure(SCHEDULE, Kind::Zset)?;
    let dead = s.structure(DEAD, Kind::Zset)?;
    let active = s.structure(ACTIVE, Kind::Zset)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    let schedulers = s.structure(SCHEDULERS, Kind::Zset)?;
    let dedup = s.structure(DEDUP, Kind::Hash)?;
    let dedup_ttl = s.structure(DEDUP_TTL, Kind::Zset)?;
    let busy: Vec<Vec<u8>> = active
        .due(f64::INFINITY, 50)
        .iter()
        .map(|id| id.bytes().to_vec())
        .collect();
    // schedulers first (so that no tick admits a job while the queue is dropped), in the order of
    // their next runs: (name, its hash's key name)
    let mut scheds: Vec<(Owned, Owned)> = Vec::new();
    for name in schedulers.due(f64::INFINITY, limit as u64) {
        let key = s.scheduler(name.bytes());
        s.expect(key.as_str(), Kind::Hash)?;
        scheds.push((name, key));
    }
    // then jobs (set index, id, row): pending from its head, then the sorted sets from their
    // lowest score
    let limit = limit - scheds.len();
    let mut victims: Vec<(usize, Owned, Owned)> = Vec::new();
    if pending.kind() == Kind::List {
        for i in 0..pending.value_len().min(limit) {
            let Some(id) = pending.index(i as i64) else {
                break;
            };
            let row = s.row_of(id.bytes());
            s.open(row.as_str())?;
            victims.push((0, id, row));
        }
    }
    for (at, set) in [(1, &schedule), (2, &dead)] {
        let left = limit - victims.len();
        if left == 0 {
            break;
        }
        for id in set.due(f64::INFINITY, left as u64) {
            let row = s.row_of(id.bytes());
            s.open(row.as_str())?;
            victims.push((at, id, row));
        }
    }
    s.probe()?;
    if !busy.is_empty() {
        return Err(Refusal::Active(busy));
    }

    let sets: [&Key; 3] = [&pending, &schedule, &dead];
    for (at, id, row) in &victims {
        if *at == 0 {
            pending.pop_head();
        } else {
            sets[*at].zrem(id.as_str());
        }
        ctx.open(row.as_str()).delete();
    }
    let popped: Vec<&Owned> = victims.iter().filter(|v| v.0 == 0).map(|v| &v.1).collect();
    if !popped.is_empty() {
        let n = ctx.int(popped.len() as i64);
        ctx.replicate(c"LPOP", &[pending.name(), n.as_str()]);
    }
    for (at, set) in [(1usize, &schedule), (2, &dead)] {
        let mut zrem: Vec<Str> = vec![set.name()];
        zrem.extend(victims.iter().filter(|v| v.0 == at).map(|v| v.1.as_str()));
        if zrem.len() > 1 {
            ctx.replicate(c"ZREM", &zrem);
        }
    }
    if !victims.is_empty() {
        let rows: Vec<Str> = victims.iter().map(|v| v.2.as_str()).collect();
        ctx.replicate(c"DEL", &rows);
    }
    if !scheds.is_empty() {
        let mut zrem: Vec<Str> = vec![schedulers.name()];
        for (name, key) in &scheds {
            schedulers.zrem(name.as_str());
            ctx.open(key.as_str()).delete();
            zrem.push(name.as_str());
        }
        let hashes: Vec<Str> = scheds.iter().map(|v| v.1.as_str()).collect();
        ctx.replicate(c"ZREM", &zrem);
        ctx.replicate(c"DEL", &hashes);
    }
    let deleted = victims.len() + scheds.len();
    if victims.len() < limit {
        let keys = [
            &pending,
            &schedule,
            &dead,
            &wake,
            &schedulers,
            &dedup,
            &dedup_ttl,
            &meta,
        ];
        for key in keys {
            key.delete();
        }
        let all = keys.map(|k| k.name());
        ctx.replicate(c"DEL", &all);
    }
    Ok(Reply::Int(deleted as i64))
}
