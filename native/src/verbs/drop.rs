//! `EMQ.DROP 1 <meta> <limit>`: the queue is deleted, up to limit schedulers and jobs a call
//! (schedulers, then ready jobs of every lane, scheduled, dead and completed jobs), and once none
//! is left every key of the queue, `meta`, `events` and every lane's keys included — but the
//! outbox's entries others wait for (a dropped parent's cancels of its children elsewhere, a
//! dropped child's `removed` outcome for its parent elsewhere, outcomes not relayed yet), which a
//! relay still delivers; refused while a job is active (naming up to 50 of them). Reply: the schedulers and jobs deleted (fewer than
//! limit: the queue is gone).

use super::flows;
use super::ready;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::{Key, Kind, Owned, Str};
use crate::keyspace::{
    ACTIVE, COMPLETED, DEAD, DEDUP, DEDUP_TTL, EVENTS, LANES, LEVELS, METRICS, OUTBOX, PARKED, PENDING,
    RING, SCHEDULE, SCHEDULERS, WAITING, WAKE,
};
use crate::wire::Refusal;

/// Runs DROP's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let ctx = s.ctx;
    let limit = args.number(0) as usize;
    let meta = s.meta()?;
    let pending = s.structure(PENDING, Kind::List)?;
    let schedule = s.structure(SCHEDULE, Kind::Zset)?;
    let dead = s.structure(DEAD, Kind::Zset)?;
    let completed = s.structure(COMPLETED, Kind::Zset)?;
    let active = s.structure(ACTIVE, Kind::Zset)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    let schedulers = s.structure(SCHEDULERS, Kind::Zset)?;
    let dedup = s.structure(DEDUP, Kind::Hash)?;
    let dedup_ttl = s.structure(DEDUP_TTL, Kind::Zset)?;
    let levels = s.structure(LEVELS, Kind::Zset)?;
    let ring = s.structure(RING, Kind::List)?;
    let lanes_index = s.structure(LANES, Kind::Zset)?;
    let parked = s.structure(PARKED, Kind::Zset)?;
    let events = s.structure(EVENTS, Kind::Stream)?;
    // flows: waiting parents go as jobs; the outbox with the queue
    let waiting = s.structure(WAITING, Kind::Zset)?;
    let outbox = s.structure(OUTBOX, Kind::Zset)?;
    // the history goes with the queue
    let metrics = s.structure(METRICS, Kind::Hash)?;
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
    // then jobs: the ready lists from their heads (pending, then each priority of levels:), then
    // the sorted sets from their lowest score
    let limit = limit - scheds.len();
    // every lane's lists: the default lane's (pending, then levels:), then each lane of `lanes`
    // (its priority 0, then its levels:), whose keys go once the queue is empty
    let mut lists: Vec<Key> = Vec::new();
    levelled(s, &levels, b"", &mut lists)?;
    let mut lane_keys: Vec<Key> = Vec::new();
    for lane in lanes_index.due(f64::INFINITY, u64::MAX) {
        let lane = lane.bytes();
        if !lane.is_empty() {
            lists.push(s.open_owned(s.ready(lane, 0), Kind::List)?);
            let levels = s.open_owned(s.levels(lane), Kind::Zset)?;
            levelled(s, &levels, lane, &mut lists)?;
            lane_keys.push(levels);
        }
        lane_keys.push(s.open_owned(s.lane(lane), Kind::Hash)?);
    }
    // (list index, id, row): list 0 is pending; popped ones are listed by their list
    let mut popped_from: Vec<(usize, Owned, Owned)> = Vec::new();
    for (at, list) in std::iter::once(&pending).chain(lists.iter()).enumerate() {
        if list.kind() != Kind::List {
            continue;
        }
        let left = limit - popped_from.len();
        for i in 0..list.value_len().min(left) {
            let Some(id) = list.index(i as i64) else {
                break;
            };
            let row = s.row_of(id.bytes());
            s.open(row.as_str())?;
            popped_from.push((at, id, row));
        }
    }
    // (set index, id, row): 1 schedule, 2 dead, 3 completed
    let mut victims: Vec<(usize, Owned, Owned)> = Vec::new();
    for (at, set) in [(1, &schedule), (2, &dead), (3, &completed), (4, &waiting)] {
        let left = limit - popped_from.len() - victims.len();
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

    for (at, list) in std::iter::once(&pending).chain(lists.iter()).enumerate() {
        let n = popped_from.iter().filter(|v| v.0 == at).count();
        if n > 0 {
            for _ in 0..n {
                list.pop_head();
            }
            let count = ctx.int(n as i64);
            ctx.replicate(c"LPOP", &[list.name(), count.as_str()]);
        }
    }
    let sets: [&Key; 5] = [&pending, &schedule, &dead, &completed, &waiting];
    for (at, id, _) in &victims {
        sets[*at].zrem(id.as_str());
    }
    // flows: a waiting parent's children elsewhere cancelled, an unfinished child's parent
    // elsewhere told (those here go with the queue)
    for (parent, (_, id, row)) in popped_from
        .iter()
        .map(|v| (false, v))
        .chain(victims.iter().map(|v| (v.0 == 4, v)))
    {
        let key = ctx.open(row.as_str());
        if key.kind() == Kind::Hash {
            flows::dropped(s, &key, row, id.bytes(), parent);
        }
        key.delete();
    }
    for (at, set) in [(1usize, &schedule), (2, &dead), (3, &completed), (4, &waiting)] {
        let mut zrem: Vec<Str> = vec![set.name()];
        zrem.extend(victims.iter().filter(|v| v.0 == at).map(|v| v.1.as_str()));
        if zrem.len() > 1 {
            ctx.replicate(c"ZREM", &zrem);
        }
    }
    if !popped_from.is_empty() || !victims.is_empty() {
        let rows: Vec<Str> = popped_from
            .iter()
            .chain(&victims)
            .map(|v| v.2.as_str())
            .collect();
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
    let jobs = popped_from.len() + victims.len();
    let deleted = jobs + scheds.len();
    if jobs < limit {
        let keys = [
            &pending,
            &schedule,
            &dead,
            &completed,
            &wake,
            &schedulers,
            &dedup,
            &dedup_ttl,
            &levels,
            &ring,
            &lanes_index,
            &parked,
            &events,
            &waiting,
            &metrics,
            &meta,
        ];
        let keys: Vec<&Key> = keys.into_iter().chain(&lane_keys).collect();
        for key in &keys {
            key.delete();
        }
        let all: Vec<Str> = keys.iter().map(|k| k.name()).collect();
        ctx.replicate(c"DEL", &all);
        // the outbox keeps what others wait for (outcomes, cancels): only creations go
        drop(outbox);
        flows::drop_creations(s);
    }
    Ok(Reply::Int(deleted as i64))
}

/// The ready lists of `lane` at the priorities ≥ 1 of its `levels` (a sorted set or missing), each
/// typed, onto `lists`.
fn levelled<'a>(
    s: &mut Scope<'a>,
    levels: &Key,
    lane: &[u8],
    lists: &mut Vec<Key<'a, 'a>>,
) -> Result<(), Refusal> {
    for m in levels.due(f64::INFINITY, u64::MAX) {
        let p = ready::parse_priority(m.bytes());
        if p > 0 {
            lists.push(s.open_owned(s.ready(lane, p), Kind::List)?);
        }
    }
    Ok(())
}
