//! `EMQ.SEAL 1 <meta> <parent>`: an open parent is sealed (no more children come: `open` deleted
//! from its row); one still waiting whose children have all finished moves to pending at once
//! (docs/design/flows.md, "Open fan-in"). Reply: 1 when it sealed, 0 when there was nothing to seal.

use super::flows;
use super::scope::Scope;
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::keyspace::{EVENTS, PENDING, WAITING, WAKE};
use crate::literals::lit;
use crate::wire::Refusal;

/// Runs SEAL's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let l = lit();
    let parent = args.bytes(0);
    let row = s.row(parent.bytes());
    let key = s.expect(row.as_str(), Kind::Hash)?;
    s.meta()?;
    s.structure(PENDING, Kind::List)?;
    s.structure(WAKE, Kind::Zset)?;
    s.structure(WAITING, Kind::Zset)?;
    // a parent made ready writes `ready`
    s.structure(EVENTS, Kind::Stream)?;
    s.probe()?;
    if key.kind() != Kind::Hash || key.hget(l.row.open).is_none() {
        return Ok(Reply::Int(0));
    }
    key.hdel(&[l.row.open]);
    flows::wake_when_done(s, &key, parent);
    Ok(Reply::Int(1))
}
