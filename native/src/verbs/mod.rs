//! The eight wire-4 verbs, one file each with its [`Verb`] value and its steps 5–6, and the table
//! the module registers. Steps 1–4 (shape, layout, fence, gates) run in `command` for every verb
//! before its handler; a handler checks its domain, then writes everything or nothing
//! (`docs/WIRE.md`).

pub mod ack;
pub mod bury;
pub mod claim;
pub mod enqueue;
pub mod move_due;
pub mod promote;
pub mod reap;
pub mod retry;
pub mod schedule;

use crate::command::Handler;
use crate::ffi::{Key, Kind, Str};
use crate::wire::{Refusal, Verb};

/// Every verb with its handler, in wire order (the spec's order).
pub const VERBS: [(&Verb, Handler); 8] = [
    (&enqueue::VERB, enqueue::run),
    (&schedule::VERB, schedule::run),
    (&promote::VERB, promote::run),
    (&claim::VERB, claim::run),
    (&ack::VERB, ack::run),
    (&retry::VERB, retry::run),
    (&bury::VERB, bury::run),
    (&reap::VERB, reap::run),
];

/// Step 5: the key is missing or has type `kind`.
pub fn expect(key: &Key, kind: Kind) -> Result<(), Refusal> {
    if key.is_empty_or(kind) {
        Ok(())
    } else {
        Err(Refusal::WrongType)
    }
}

/// Step 5 for ACK/RETRY/BURY: the id is a member of active and its row exists.
pub fn expect_active(row: &Key, active: &Key, id: Str) -> Result<(), Refusal> {
    if row.kind() == Kind::Hash && active.kind() == Kind::Zset && active.zscore(id).is_some() {
        Ok(())
    } else {
        Err(Refusal::NotActive)
    }
}
