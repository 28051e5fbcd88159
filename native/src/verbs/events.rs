//! The queue's events stream (`events`, docs/WIRE.md "Events"; the spec is `lib/wire/events.ts`):
//! each verb that makes a transition appends its entries here, in the same command, after its
//! writes. [`Events::open`] is step 5 (the key typed under the caller's ACL, `meta`'s `events_max`
//! read: absent 10000, 0 none written); [`Events::add`] is step 6: `XADD events MAXLEN ~ <max> *
//! type <type> <field> <value> …`, the fields in the spec's order (`EVENT_FIELDS`, by
//! construction: an entry is an [`EventFields`] of optional values). Trimmed by whole stream nodes
//! (exact trimming rewrites the oldest node on every call: a fifth of the server's work per job),
//! and replicated as Valkey replicates its own `XADD … MAXLEN ~`: `XADD events MAXLEN <length
//! left> <id> …`, exact, with the id the server picked, so that replicas and the AOF hold the same
//! stream.

use super::retention::limit;
use super::scope::Scope;
use crate::ffi::{Ctx, Key, Kind, Owned, Str, Trim};
use crate::keyspace::EVENTS;
use crate::literals::lit;
use crate::spec::{EventFields, EVENTS_MAX_DEFAULT, EVENT_FIELD};
use crate::wire::Refusal;

/// An entry's fields after its `type`, each when the entry carries it.
pub type Fields<'s> = EventFields<Option<Str<'s>>>;

/// An entry carrying no field yet.
pub fn blank<'s>() -> Fields<'s> {
    EVENT_FIELD.map(|_| None)
}

/// One call's writer of the queue's events.
pub struct Events<'a> {
    ctx: Ctx<'a>,
    /// The stream, unless the verb writes no events.
    key: Option<Key<'a, 'a>>,
    max: i64,
}

impl<'a> Events<'a> {
    /// Step 5: the queue's `events` (missing or a stream, else WRONGTYPE; NOPERM when the
    /// caller's ACL user may not access it) and `meta`'s `events_max`.
    pub fn open(s: &mut Scope<'a>, meta: &Key) -> Result<Events<'a>, Refusal> {
        let key = s.structure(EVENTS, Kind::Stream)?;
        let max = if meta.kind() == Kind::Hash {
            limit(meta, lit().meta.events_max, EVENTS_MAX_DEFAULT)
        } else {
            EVENTS_MAX_DEFAULT
        };
        Ok(Events {
            ctx: s.ctx,
            key: Some(key),
            max,
        })
    }

    /// The writer of a verb that writes no events (EXTEND), which opens nothing.
    pub fn none(s: &Scope<'a>) -> Events<'a> {
        Events {
            ctx: s.ctx,
            key: None,
            max: 0,
        }
    }

    /// Closes the stream's handle (`Key::close`), until [`reopen`](Self::reopen).
    pub fn close(&mut self) {
        if let Some(key) = &mut self.key {
            key.close();
        }
    }

    /// Opens the stream's handle again, on the keyspace as it is now.
    pub fn reopen(&mut self) {
        if let Some(key) = &mut self.key {
            key.reopen();
        }
    }

    /// Whether the queue writes events (`events_max` is not 0).
    pub fn on(&self) -> bool {
        self.max > 0 && self.key.is_some()
    }

    /// Appends one entry `type <ty>` with `f`'s fields (in the spec's order), the stream trimmed
    /// by whole nodes to at least `events_max` entries; replicated with its id and the length
    /// left. Nothing when the queue writes no events.
    pub fn add(&self, ty: Str, f: &Fields) {
        let Some(key) = self.key.as_ref().filter(|_| self.max > 0) else {
            return;
        };
        let l = lit();
        let mut pairs: Vec<Str> = Vec::with_capacity(2 + 2 * 8);
        pairs.extend([l.event_type, ty]);
        for (name, value) in l.event_field.all().into_iter().zip(f.all()) {
            if let Some(value) = value {
                pairs.extend([name, value]);
            }
        }
        // a handle opened on a missing stream that another handle of the call has since made
        // (a flow's event, `flows.rs`) would make it twice: write through a fresh handle then
        let fresh;
        let key = if key.kind() == Kind::Empty {
            fresh = self.ctx.open(key.name());
            &fresh
        } else {
            key
        };
        // the key is a stream or missing (typed at step 5): the server refuses only an id past
        // the largest, which no clock reaches
        let Some(id) = key.stream_add(&pairs) else {
            return;
        };
        key.stream_trim(self.max, Trim::Nodes);
        let ctx = self.ctx;
        let id = ctx.pair(id.ms.into(), b'-', id.seq.into());
        let left = ctx.int(key.value_len() as i64);
        let mut xadd: Vec<Str> = Vec::with_capacity(4 + pairs.len());
        xadd.extend([key.name(), l.maxlen, left.as_str(), id.as_str()]);
        xadd.extend(pairs);
        ctx.replicate(c"XADD", &xadd);
    }

    /// Appends an entry `type <ty> jobs <ids…>` (space-separated), when `ids` is not empty.
    pub fn jobs<'i>(&self, ty: Str, ids: impl IntoIterator<Item = &'i [u8]>) {
        if !self.on() {
            return;
        }
        let Some(jobs) = self.list(ids) else {
            return;
        };
        self.add(
            ty,
            &Fields {
                jobs: Some(jobs.as_str()),
                ..blank()
            },
        );
    }

    /// `items` space-separated, as a string of the call; `None` when there are none.
    pub fn list<'i>(&self, items: impl IntoIterator<Item = &'i [u8]>) -> Option<Owned<'a>> {
        let mut text = Vec::new();
        for item in items {
            if !text.is_empty() {
                text.push(b' ');
            }
            text.extend_from_slice(item);
        }
        (!text.is_empty()).then(|| self.ctx.string(&text))
    }
}
