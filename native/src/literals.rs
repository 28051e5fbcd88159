//! The strings every call needs, made once at load and shared by every call: the names the verbs
//! store (from the spec, `spec.rs`: a row's fields, the states, `meta`'s fields, `wake`'s markers,
//! the events' types and fields),
//! the wire's own values, and the tokens of the effects the verbs replicate. Each is made as an
//! `ffi::Literal`, never freed, and handed to the verbs as a `Str` by [`lit`].

use std::sync::OnceLock;

use crate::ffi::{Literal, Str};
use crate::spec::{self, EventFields, Events, History, Lane, Meta, Row, Scheduler, States, Wake};

/// The module's literals, each an `S`.
#[derive(Clone, Copy)]
pub struct Literals<S> {
    /// A row's field names.
    pub row: Row<S>,
    /// The states a row's `state` takes.
    pub state: States<S>,
    /// `meta`'s field names.
    pub meta: Meta<S>,
    /// A lane's state field names.
    pub lane: Lane<S>,
    /// `wake`'s markers.
    pub wake: Wake<S>,
    /// A scheduler's field names.
    pub sched: Scheduler<S>,
    /// The history hash's field names (besides its minutes).
    pub history: History<S>,
    /// The kinds of event (an entry's `type`).
    pub event: Events<S>,
    /// The fields of an event entry after its `type`.
    pub event_field: EventFields<S>,
    /// An event entry's first field (`type`).
    pub event_type: S,
    /// `MAXLEN`, XADD's and XTRIM's trimming option.
    pub maxlen: S,
    /// The wire's number (`7`), as `meta` stores it.
    pub wire: S,
    /// The standalone server's fence key (`{emq}:version`).
    pub fence_key: S,
    /// `0`: a zero score, or a count.
    pub zero: S,
    /// `LT`, the flag of `ZADD`.
    pub lt: S,
    /// The empty string (a claimed job's options when it has none).
    pub empty: S,
    /// An admission's outcomes: folded into a holder as is, or with its payload.
    pub deduplicated: S,
    /// See `deduplicated`.
    pub debounced: S,
    /// A member no job id can be (NUL first: ids start with `JOB`), longer than a listpack sorted
    /// set takes (`zset-max-listpack-value`, 64 by default): added to a new sorted set first, it
    /// makes the set a skiplist, which stays one after the member is removed (see `claim.rs`).
    pub skiplist: S,
}

impl<S> Literals<S> {
    fn map<T>(self, mut f: impl FnMut(S) -> T) -> Literals<T> {
        Literals {
            row: self.row.map(&mut f),
            state: self.state.map(&mut f),
            meta: self.meta.map(&mut f),
            lane: self.lane.map(&mut f),
            wake: self.wake.map(&mut f),
            sched: self.sched.map(&mut f),
            history: self.history.map(&mut f),
            event: self.event.map(&mut f),
            event_field: self.event_field.map(&mut f),
            event_type: f(self.event_type),
            maxlen: f(self.maxlen),
            wire: f(self.wire),
            fence_key: f(self.fence_key),
            zero: f(self.zero),
            lt: f(self.lt),
            empty: f(self.empty),
            deduplicated: f(self.deduplicated),
            debounced: f(self.debounced),
            skiplist: f(self.skiplist),
        }
    }
}

/// The bytes of [`Literals::skiplist`]: NUL, then `emq:skiplist`, padded with NULs to 1024 bytes
/// (a server whose `zset-max-listpack-value` is this high or more keeps listpacks: slower, not wrong).
static SKIPLIST: [u8; 1024] = {
    let mut b = [0u8; 1024];
    let tag = b"emq:skiplist";
    let mut i = 0;
    while i < tag.len() {
        b[i + 1] = tag[i];
        i += 1;
    }
    b
};

static LITERALS: OnceLock<Literals<Literal>> = OnceLock::new();

/// Makes the literals; called once from `OnLoad`.
pub fn init() {
    let wire = spec::WIRE.to_string();
    let names = Literals {
        row: spec::ROW,
        state: spec::STATE,
        meta: spec::META,
        lane: spec::LANE,
        wake: spec::WAKE,
        sched: spec::SCHEDULER,
        history: spec::HISTORY,
        event: spec::EVENT,
        event_field: spec::EVENT_FIELD,
        event_type: spec::EVENT_TYPE_FIELD.as_bytes(),
        maxlen: b"MAXLEN",
        wire: wire.as_bytes(),
        fence_key: spec::FENCE_KEY.as_bytes(),
        zero: b"0",
        lt: b"LT",
        empty: b"",
        deduplicated: b"deduplicated",
        debounced: b"debounced",
        skiplist: &SKIPLIST,
    };
    LITERALS.get_or_init(|| names.map(Literal::new));
}

/// The literals, as strings a call may pass.
pub fn lit() -> Literals<Str<'static>> {
    LITERALS
        .get()
        .expect("literals are made at load")
        .map(Literal::str)
}
