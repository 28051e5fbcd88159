//! `EMQ.TELL 1 <meta> (<entry>)…`: APPLY of `done` and `cancel` entries only (an entry of another
//! kind refuses the call, `entry-form`). Registered without `deny-oom`: a child's outcome reaching
//! its parent, or a cancel deleting a child, is never refused under maxmemory (docs/design/flows.md,
//! "Relaying"), while APPLY, which makes jobs, is. Reply: the entries that changed something.

use super::apply::applied;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::wire::Refusal;

/// Runs TELL's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    applied(s, args, false)
}
