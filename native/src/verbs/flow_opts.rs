//! A flow step's options (wire 16; docs/design/flows.md, "Options"): the `opts` text of ENQUEUE,
//! given per child (FLOW's and ADOPT's groups), to the parent (FLOW's `parent_opts`), and carried
//! length-prefixed in `child` and `node` entries and subtrees (`<opts length>\0<opts>`). A step
//! made with them lands as an admission with the same options would: its row keeps `opts`, its
//! `priority` and `lane`, it is ready in its lane at its priority, and the first step with a lane
//! makes the queue laned (as ENQUEUE's first laned job).

use super::admit;
use super::enqueue::placed;
use super::lanes;
use super::ready::Place;
use super::scope::Scope;
use super::{counter, flows};
use crate::ffi::{Key, Kind};
use crate::keyspace::PENDING;
use crate::literals::lit;
use crate::options;
use crate::spec::MAX_OPTIONS_BYTES;
use crate::wire::Refusal;

/// The lane and priority options `opts` (gated) give: the default lane at 0 when none.
pub fn place(opts: &[u8]) -> Place {
    let o = options::parse(opts).unwrap_or_default();
    (
        o.bytes("lane").unwrap_or_default().to_vec(),
        o.number("priority").unwrap_or(0) as u64,
    )
}

/// `<opts length>\0<opts><rest>` split: the options (through the options gate) and the rest;
/// None when malformed.
pub fn split(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = flows::number_then(b, 4)?;
    if len > MAX_OPTIONS_BYTES || rest.len() < len {
        return None;
    }
    let (opts, rest) = rest.split_at(len);
    options::parse(opts).ok()?;
    Some((opts, rest))
}

/// `opts` as an entry or a subtree carries it: `<opts length>\0<opts>`.
pub fn prefixed(opts: &[u8]) -> Vec<u8> {
    [opts.len().to_string().as_bytes(), b"\0", opts].concat()
}

/// Whether making steps at `places` makes the queue laned: one has a lane and `meta` is not laned.
pub fn laning<'p>(meta: &Key, mut places: impl Iterator<Item = &'p Place>) -> bool {
    places.any(|(lane, _)| !lane.is_empty()) && lanes::laned(meta).is_none()
}

/// Step 5 of an admission that makes the queue laned (as ENQUEUE's): `pending`, `prioritized`,
/// the default lane's keys.
pub fn check_laning(s: &mut Scope, meta: &Key) -> Result<(), Refusal> {
    s.structure(PENDING, Kind::List)?;
    counter(meta, lit().meta.prioritized)?;
    lanes::check(s, [&b""[..]], false)
}

/// Step 6: the queue made laned (as ENQUEUE's first laned job), its `wake` opened now.
pub fn laned(s: &Scope, meta: &Key) {
    admit::laning(s, meta, &s.ctx.open_named(s.name(crate::keyspace::WAKE)));
}

/// Step 6: a step's row `row` given its options `opts` (when any) and its place's `priority` and `lane`.
pub fn write(s: &Scope, row: &Key, opts: &[u8]) {
    if opts.is_empty() {
        return;
    }
    let text = s.ctx.string(opts);
    row.hset(&[(lit().row.opts, text.as_str())]);
    placed(s.ctx, row, &place(opts));
}
