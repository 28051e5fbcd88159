//! `EMQ.REAP 1 <meta> <limit>`: up to limit ids whose lease expired move active → pending (RPUSH:
//! claimed next), their rows to state `pending`; a `ready` marker on wake when any moved. Reply:
//! ids moved.

use super::move_due::moved;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::keyspace::ACTIVE;
use crate::wire::Refusal;

/// Runs REAP's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    moved(s, args.number(0), ACTIVE, true)
}
