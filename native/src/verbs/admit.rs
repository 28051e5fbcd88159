//! What ENQUEUE and SCHEDULE share (the twin of `lib/lua/admit.ts`): step 5 of an admission
//! (`admit`: no id twice, no row already there — the first such id is a duplicate — then the
//! types of meta, of the structure written and of wake, and meta's `enqueued` counter), and the
//! first write (`admitted`: the queue's `meta` made on first use, the admissions counted).

use super::scope::Scope;
use super::{add, counter, made, once};
use crate::command::Args;
use crate::ffi::{Key, Kind, Owned, Str};
use crate::keyspace::WAKE;
use crate::literals::lit;
use crate::wire::Refusal;

/// An admission that may be written.
pub struct Admission<'a> {
    /// The new jobs' ids (group argument 0), none twice.
    pub ids: Vec<Str<'a>>,
    /// Their rows, none of which exists.
    pub rows: Vec<Owned<'a>>,
    /// The queue's `meta`.
    pub meta: Key<'a, 'a>,
    /// The structure the jobs go to (pending, schedule).
    pub structure: Key<'a, 'a>,
    /// The queue's `wake`.
    pub wake: Key<'a, 'a>,
    /// `meta`'s `enqueued` counter now.
    enqueued: i64,
}

/// Checks an admission of `args`' jobs into the queue's structure of type `structure` (`kind`).
pub fn admit<'a>(
    s: &mut Scope<'a>,
    args: &Args<'a>,
    structure: &[u8],
    kind: Kind,
) -> Result<Admission<'a>, Refusal> {
    let ids = args.ids();
    once(&ids)?;
    let mut rows = Vec::with_capacity(ids.len());
    for id in &ids {
        let name = s.row(id.bytes());
        if s.open(name.as_str())?.kind() != Kind::Empty {
            return Err(Refusal::Duplicate(id.bytes().to_vec()));
        }
        s.absent(name.as_str());
        rows.push(name);
    }
    let meta = s.meta()?;
    let structure = s.structure(structure, kind)?;
    let wake = s.structure(WAKE, Kind::Zset)?;
    let enqueued = counter(&meta, lit().meta.enqueued)?;
    Ok(Admission {
        ids,
        rows,
        meta,
        structure,
        wake,
        enqueued,
    })
}

/// `meta` made when missing (`wire 5 created_ms <now>`), then `enqueued` + the jobs admitted.
pub fn admitted(a: &Admission, now: Str) {
    made(&a.meta, now);
    add(&a.meta, lit().meta.enqueued, a.enqueued, a.ids.len() as i64);
}
