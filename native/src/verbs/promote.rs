//! `EMQ.PROMOTE 1 <meta> <limit>`: up to limit due ids move schedule → pending (LPUSH), their rows
//! to state `pending`; a `ready` marker on wake when any moved. Reply: ids moved.

use super::move_due::moved;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::keyspace::SCHEDULE;
use crate::wire::Refusal;

/// Runs PROMOTE's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    moved(s, args.number(0), SCHEDULE, false)
}
