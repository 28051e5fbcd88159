//! `EMQ.ADOPT 1 <meta> <parent> <from> (<id> <queue> <policy> <opts> <body>)…`: an open parent (FLOW with
//! open 1, not sealed) still waiting adopts more children at places from, from + 1, … (`from` must
//! be its count of children so far: the client derives the ids from the places), each made as FLOW
//! makes its children (docs/design/flows.md, "Open fan-in"); an `enqueued` event names the children
//! made here. Reply: the children made here.

use super::events::Events;
use super::flow::Children;
use super::scope::Scope;
use super::{add, once};
use crate::command::{Args, Reply};
use crate::ffi::Kind;
use crate::gates;
use crate::keyspace::WAITING;
use crate::literals::lit;
use crate::spec::MAX_FAN_IN;
use crate::wire::Refusal;

/// Runs ADOPT's steps 5–6.
pub fn run<'a>(s: &mut Scope<'a>, args: &Args<'a>) -> Result<Reply<'a>, Refusal> {
    let l = lit();
    let (parent, from) = (args.bytes(0), args.number(1));
    // the parent first, as FLOW's: no id twice among it and its new children
    let mut all = vec![parent];
    all.extend_from_slice(&args.ids());
    once(&all)?;
    Children::forms(args)?;
    let row = s.row(parent.bytes());
    let key = s.expect(row.as_str(), Kind::Hash)?;
    let [state, open, count] = key.hget_each([l.row.state, l.row.open, l.row.children]);
    let waits = state.is_some_and(|v| v.bytes() == l.state.waiting.bytes());
    if key.kind() != Kind::Hash || !waits || open.is_none() {
        return Err(Refusal::NotOpen);
    }
    let count = count.and_then(|v| gates::bounded_counter(v.bytes())).unwrap_or(0);
    if count != from {
        return Err(Refusal::FlowPlace(count.to_string()));
    }
    if from + args.jobs() as i64 > MAX_FAN_IN {
        return Err(Refusal::FanIn(MAX_FAN_IN as u64));
    }
    let kids = Children::check(s, args)?;
    s.structure(WAITING, Kind::Zset)?;
    let kids = kids.plan(s, args, None)?;
    let meta = s.meta()?;
    let events = Events::open(s, &meta)?;
    s.probe()?;

    kids.laned(s);
    add(&key, l.row.children, count, args.jobs() as i64);
    let made = kids.write(s, args, &key, parent, from as usize, 0);
    events.jobs(l.event.enqueued, kids.made(args));
    Ok(Reply::Int(made))
}
