//! Wire facts shared by every verb, as types: an argument's gate ([`Gate`]), a verb's call shape
//! ([`Verb`]: one declared key, the queue's `meta`; fixed arguments and a repeated group, each with
//! its gate), the refusals with their exact texts ([`Refusal`]), and the [`names!`] sets of stored
//! names. Pure code. The values — every verb, argument and constant of the spec `lib/wire` — are
//! generated into `spec.rs`; the unit tests below check both against `tests/vectors/wire.json`.

use crate::keyspace::MAX_NAME_BYTES;
use crate::spec::{MAX_BATCH, MAX_OPTIONS_BYTES, WIRE};

/// How an argument is checked at step 4 (the spec's `Gate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Starts with `JOB`.
    JobId,
    /// 1 to `digits` ASCII digits, at least `min` (0 or 1), at most `max` when bounded.
    Number {
        min: u64,
        max: Option<u64>,
        digits: usize,
    },
    /// A name inside a queue (a scheduler's): `keyspace::valid_name`.
    Name,
    /// Empty (the queue, or the default lane) or a name ([`Gate::Name`]).
    Lane,
    /// At most `limit` bytes, else refused as `refusal` (the spec's refusal name: `payload`, …).
    Bytes { refusal: &'static str, limit: Limit },
    /// A job's options: `options::parse` (the spec's `OPTIONS`, each value through its gate).
    Options,
}

/// One option a job may carry: its key, the gate of its value, the option it needs.
#[derive(Debug)]
pub struct Opt {
    /// The key (`dedup`); its gate's refusals name it.
    pub name: &'static str,
    /// The gate of its value (a number or a name).
    pub gate: Gate,
    /// The option it qualifies, which must be given with it.
    pub needs: Option<&'static str>,
}

/// The most bytes a [`Gate::Bytes`] argument may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// A limit the spec fixes.
    Fixed(i64),
    /// The node's `emq.max-payload` (the spec's default is the scripts' limit).
    MaxPayload,
}

/// One argument: its spec name and gate.
#[derive(Debug)]
pub struct Arg {
    /// The spec's name (`lease_ms`); number refusals name it.
    pub name: &'static str,
    /// Its gate.
    pub gate: Gate,
}

/// One verb's call shape: `EMQ.<VERB> 1 <meta> <fixed args…> [<group>…]`.
#[derive(Debug)]
pub struct Verb {
    /// Upper-case name used in error texts (`EMQ.ENQUEUE`).
    pub name: &'static str,
    /// Registered command name (`emq.enqueue`).
    pub command: &'static str,
    /// Arguments after the key, once.
    pub args: &'static [Arg],
    /// Arguments repeated once per job (a batch); empty when the verb has none.
    pub group: &'static [Arg],
    /// The fewest groups a call carries (1, or 0 for a verb that may name no job).
    pub min_groups: usize,
    /// Whether it only adds memory (admits jobs, stores progress): refused under `maxmemory`
    /// (`deny-oom`).
    pub admits: bool,
}

/// A set of names the verbs store (a row's fields, the states, …), as a struct with one field per
/// name, generic in what each holds: `NAME` holds the names as bytes (each the field's own
/// identifier), and `map` turns them into anything else (the module's literals, at load).
macro_rules! names {
    ($(#[$doc:meta])* $set:ident $names:ident { $($(#[$field_doc:meta])* $field:ident,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $set<S> {
            $($(#[$field_doc])* pub $field: S,)*
        }

        impl<S> $set<S> {
            /// Each name through `f`, in order.
            pub fn map<T>(self, mut f: impl FnMut(S) -> T) -> $set<T> {
                $set { $($field: f(self.$field),)* }
            }

            /// Every name, in order.
            pub fn all(self) -> Vec<S> {
                vec![$(self.$field,)*]
            }
        }

        #[doc = concat!("The names of [`", stringify!($set), "`], as stored.")]
        pub const $names: $set<&'static [u8]> = $set { $($field: stringify!($field).as_bytes(),)* };
    };
}
pub(crate) use names;

impl Verb {
    /// The number of groups (jobs) an argv of `argc` entries carries, or why it cannot: `None` for
    /// a malformed count (arity), `Some(Err(()))` beyond [`MAX_BATCH`].
    pub fn groups(&self, argc: usize) -> Option<Result<usize, ()>> {
        let rest = argc.checked_sub(3 + self.args.len())?;
        let g = self.group.len();
        if g == 0 {
            return (rest == 0).then_some(Ok(0));
        }
        if rest < g * self.min_groups || rest % g != 0 {
            return None;
        }
        let n = rest / g;
        Some(if n > MAX_BATCH { Err(()) } else { Ok(n) })
    }
}

/// Why a call is refused; every refusal writes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Step 1: numkeys or the argument count is not the verb's.
    Arity,
    /// Step 2: the declared key is not the `meta` of a valid, non-empty queue name.
    Layout,
    /// Step 3: the server speaks another wire (its number, or `unknown`).
    Fenced(String),
    /// Step 4: more groups than [`MAX_BATCH`].
    Batch,
    /// Step 4: an id lacks the `JOB` prefix.
    NotJobId,
    /// Step 4: a name argument breaks the name rule (its name).
    NotName(&'static str),
    /// Step 4: a number argument is malformed (its name, and whether it must be ≥ 1).
    Number(&'static str, bool),
    /// Step 4: a number argument above its bound (its name, the bound).
    TooLarge(&'static str, u64),
    /// Step 4: a bytes argument is longer than its limit (the gate's refusal name, the limit).
    TooLong(&'static str, i64),
    /// Step 4: a job's options are longer than `MAX_OPTIONS_BYTES`.
    OptionsTooLong,
    /// Step 4: an option item without `=` or with an empty key.
    OptionForm,
    /// Step 4: an option key this wire does not have (the key as sent).
    OptionUnknown(Vec<u8>),
    /// Step 4: an option given twice (its key).
    OptionRepeated(&'static str),
    /// Step 4: an option given without the one it needs (its key, the needed key).
    OptionNeeds(&'static str, &'static str),
    /// Step 5: one call names a job twice (the id).
    Repeated(Vec<u8>),
    /// Step 5: ENQUEUE/SCHEDULE of an id whose row exists (the id).
    Duplicate(Vec<u8>),
    /// Step 5: the caller's ACL user may not access a derived key.
    NoPerm,
    /// Step 5: a key holds the wrong Valkey type.
    WrongType,
    /// Step 5: jobs not held under the given tokens (their ids, in argument order).
    LeaseLost(Vec<Vec<u8>>),
    /// Step 5: REMOVE of jobs a worker holds (their ids).
    Active(Vec<Vec<u8>>),
    /// Step 5: REQUEUE of ids not in the dead set (their ids).
    NotDead(Vec<Vec<u8>>),
    /// Step 5: RUN of ids not in the schedule (their ids).
    NotScheduled(Vec<Vec<u8>>),
    /// Step 5: CLAIM of a row whose `attempts` is not an integer (HINCRBY's refusal).
    NotInteger,
    /// Step 5: cluster, slot migrating, a needed key is not on this node.
    Migrating,
}

impl Refusal {
    /// The spec's name of the refusal (`lib/wire/refusals.ts`).
    pub fn name(&self) -> &'static str {
        match self {
            Refusal::Arity => "arity",
            Refusal::Layout => "layout",
            Refusal::Fenced(_) => "fenced",
            Refusal::Batch => "batch",
            Refusal::NotJobId => "job-id",
            Refusal::NotName(_) => "name",
            Refusal::Number(_, true) => "positive",
            Refusal::Number(_, false) => "non-negative",
            Refusal::TooLarge(..) => "too-large",
            Refusal::TooLong(name, _) => name,
            Refusal::OptionsTooLong => "options",
            Refusal::OptionForm => "option-form",
            Refusal::OptionUnknown(_) => "option-unknown",
            Refusal::OptionRepeated(_) => "option-repeated",
            Refusal::OptionNeeds(..) => "option-needs",
            Refusal::Repeated(_) => "repeated",
            Refusal::Duplicate(_) => "duplicate",
            Refusal::NoPerm => "noperm",
            Refusal::WrongType => "wrongtype",
            Refusal::LeaseLost(_) => "lease-lost",
            Refusal::Active(_) => "active",
            Refusal::NotDead(_) => "not-dead",
            Refusal::NotScheduled(_) => "not-scheduled",
            Refusal::NotInteger => "counter",
            Refusal::Migrating => "migrating",
        }
    }

    /// The exact error text (with its code) for `verb`, as `docs/WIRE.md` fixes it.
    pub fn text(&self, verb: &Verb) -> Vec<u8> {
        let v = verb.name;
        let with_ids = |head: String, ids: &[&[u8]]| {
            let mut out = head.into_bytes();
            for (i, id) in ids.iter().enumerate() {
                if i > 0 {
                    out.push(b' ');
                }
                out.extend_from_slice(id);
            }
            out
        };
        let t = match self {
            Refusal::Arity => format!("ERR wrong number of arguments for '{v}' command"),
            Refusal::Layout => format!("ERR {v} keys do not match the wire-{WIRE} layout"),
            Refusal::Fenced(w) => {
                format!("ERR {v} fenced: this server speaks wire {w}, not wire {WIRE}")
            }
            Refusal::Batch => format!("ERR {v} at most {MAX_BATCH} jobs per call"),
            Refusal::NotJobId => format!("ERR {v} id must be a JOB id"),
            Refusal::NotName(arg) => format!(
                "ERR {v} {arg} must be a name of 1 to {MAX_NAME_BYTES} bytes without braces or NUL"
            ),
            Refusal::Number(field, true) => format!("ERR {v} {field} must be a positive integer"),
            Refusal::Number(field, false) => {
                format!("ERR {v} {field} must be a non-negative integer")
            }
            Refusal::TooLarge(field, max) => format!("ERR {v} {field} must be at most {max}"),
            Refusal::TooLong(name, limit) => format!("ERR {v} {name} exceeds {limit} bytes"),
            Refusal::OptionsTooLong => format!("ERR {v} options exceed {MAX_OPTIONS_BYTES} bytes"),
            Refusal::OptionForm => format!("ERR {v} options must be key=value items joined by NUL"),
            Refusal::OptionUnknown(key) => {
                // any bytes may come here: printable ASCII only, so that every client can parse the error
                let key: String = key
                    .iter()
                    .map(|&b| {
                        if (0x20..0x7f).contains(&b) {
                            b as char
                        } else {
                            '?'
                        }
                    })
                    .collect();
                format!("ERR {v} unknown option {key}")
            }
            Refusal::OptionRepeated(key) => format!("ERR {v} option {key} appears twice"),
            Refusal::OptionNeeds(key, needs) => {
                format!("ERR {v} option {key} needs option {needs}")
            }
            Refusal::Repeated(id) => {
                let mut out = with_ids(format!("ERR {v} id "), &[id]);
                out.extend_from_slice(b" appears twice");
                return sanitize(out);
            }
            Refusal::Duplicate(id) => {
                return sanitize(with_ids(format!("ERR {v} duplicate id "), &[id]))
            }
            Refusal::NoPerm => "NOPERM No permissions to access a key".to_string(),
            Refusal::WrongType => {
                "WRONGTYPE Operation against a key holding the wrong kind of value".to_string()
            }
            Refusal::LeaseLost(ids)
            | Refusal::Active(ids)
            | Refusal::NotDead(ids)
            | Refusal::NotScheduled(ids) => {
                let head = match self {
                    Refusal::LeaseLost(_) => "lease lost",
                    Refusal::Active(_) => "job is active",
                    Refusal::NotScheduled(_) => "job is not scheduled",
                    _ => "job is not dead",
                };
                let ids: Vec<&[u8]> = ids.iter().map(Vec::as_slice).collect();
                return sanitize(with_ids(format!("ERR {v} {head}: "), &ids));
            }
            Refusal::NotInteger => "ERR hash value is not an integer".to_string(),
            Refusal::Migrating => {
                "TRYAGAIN Multiple keys request during rehashing of slot".to_string()
            }
        };
        t.into_bytes()
    }
}

/// The fence value as the refusal names it: its number when it is 1 to 15 digits, else `unknown`.
pub fn fence_found(value: &[u8]) -> String {
    match crate::gates::digits(value) {
        Some(_) => String::from_utf8_lossy(value).into_owned(),
        None => "unknown".to_string(),
    }
}

/// An error reply is one line: CR, LF and NUL (from a fence value) become spaces.
fn sanitize(mut text: Vec<u8>) -> Vec<u8> {
    for b in text.iter_mut() {
        if matches!(*b, b'\r' | b'\n' | 0) {
            *b = b' ';
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{self, VERBS};
    use serde_json::Value;

    fn spec() -> Value {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/wire.json");
        let text = std::fs::read_to_string(path).expect("tests/vectors/wire.json is readable");
        serde_json::from_str(&text).expect("tests/vectors/wire.json is JSON")
    }

    fn verb(name: &str) -> &'static Verb {
        &VERBS
            .iter()
            .find(|c| c.verb.name == name)
            .expect("a registered verb")
            .verb
    }

    /// A gate as the spec's vectors spell it (`tools/gen_wire.ts`'s `gateName`).
    fn gate_name(g: Gate) -> String {
        match g {
            Gate::JobId => "job-id".into(),
            Gate::Name => "name".into(),
            Gate::Lane => "lane".into(),
            Gate::Options => format!("options<={MAX_OPTIONS_BYTES}"),
            Gate::Number { min, max, digits } => {
                let max = max.map_or(String::new(), |m| format!("<={m}"));
                let digits = if digits == spec::MAX_DIGITS {
                    String::new()
                } else {
                    format!(":{digits}")
                };
                format!("number>={min}{max}{digits}")
            }
            Gate::Bytes {
                refusal,
                limit: Limit::MaxPayload,
            } => format!("bytes:{refusal}"),
            Gate::Bytes {
                refusal,
                limit: Limit::Fixed(n),
            } => format!("bytes:{refusal}<={n}"),
        }
    }

    fn args(list: &[Arg]) -> Vec<(String, String)> {
        list.iter()
            .map(|a| (a.name.to_string(), gate_name(a.gate)))
            .collect()
    }

    fn spec_args(v: &Value) -> Vec<(String, String)> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|a| {
                let field = |k: &str| a[k].as_str().unwrap().to_string();
                (field("name"), field("gate"))
            })
            .collect()
    }

    fn strings(v: &Value) -> Vec<String> {
        let list = v.as_array().expect("a list");
        list.iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    }

    fn names(set: Vec<&[u8]>) -> Vec<String> {
        set.iter()
            .map(|n| String::from_utf8(n.to_vec()).unwrap())
            .collect()
    }

    /// The generated `spec.rs` is the spec the vectors hold, read back through this module's
    /// types (so a hand edit of `spec.rs`, or a gate the module reads otherwise, fails here even
    /// when `cargo test` runs alone): every verb in the spec's order — name, command, arguments
    /// with their gates, admission — the constants, and the names the verbs store.
    #[test]
    fn spec_is_the_vectors() {
        let want = spec();
        assert_eq!(want["wire"].as_i64(), Some(spec::WIRE));
        assert_eq!(want["maxBatch"].as_u64(), Some(MAX_BATCH as u64));
        assert_eq!(
            want["claimMoveLimit"].as_u64(),
            Some(spec::CLAIM_MOVE_LIMIT)
        );
        assert_eq!(
            want["deadMaxDefault"].as_i64(),
            Some(spec::DEAD_MAX_DEFAULT)
        );
        assert_eq!(
            want["deadAgeDefaultMs"].as_i64(),
            Some(spec::DEAD_AGE_DEFAULT_MS)
        );
        assert_eq!(want["trimLimit"].as_i64(), Some(spec::TRIM_LIMIT));
        assert_eq!(want["maxDigits"].as_u64(), Some(spec::MAX_DIGITS as u64));
        assert_eq!(
            want["maxCounterDigits"].as_u64(),
            Some(spec::MAX_COUNTER_DIGITS as u64)
        );
        assert_eq!(
            want["maxPayloadBytes"].as_i64(),
            Some(spec::MAX_PAYLOAD_BYTES)
        );
        assert_eq!(want["fenceKey"].as_str(), Some(spec::FENCE_KEY));
        let verbs = want["verbs"].as_array().expect("verbs");
        assert_eq!(verbs.len(), VERBS.len(), "every verb of the spec, no more");
        for (v, want) in VERBS.iter().map(|c| &c.verb).zip(verbs) {
            assert_eq!(v.name, format!("EMQ.{}", want["verb"].as_str().unwrap()));
            assert_eq!(v.command, v.name.to_lowercase());
            assert_eq!(args(v.args), spec_args(&want["args"]), "{} args", v.name);
            assert_eq!(args(v.group), spec_args(&want["group"]), "{} group", v.name);
            assert_eq!(
                want["minGroups"].as_u64(),
                Some(v.min_groups as u64),
                "{}",
                v.name
            );
            assert_eq!(Some(v.admits), want["admits"].as_bool(), "{}", v.name);
        }
        assert_eq!(names(spec::ROW.all()), strings(&want["row"]));
        assert_eq!(names(spec::STATE.all()), strings(&want["states"]));
        assert_eq!(names(spec::META.all()), strings(&want["meta"]));
        assert_eq!(names(spec::LANE.all()), strings(&want["lane"]));
        assert_eq!(names(spec::WAKE.all()), strings(&want["wake"]));
        assert_eq!(names(spec::SCHEDULER.all()), strings(&want["scheduler"]));
        for (field, value) in [
            ("completedMaxDefault", spec::COMPLETED_MAX_DEFAULT),
            ("completedAgeDefaultMs", spec::COMPLETED_AGE_DEFAULT_MS),
            ("eventsMaxDefault", spec::EVENTS_MAX_DEFAULT),
        ] {
            assert_eq!(want[field].as_i64(), Some(value), "{field}");
        }
        // every kind of event; an entry writes its fields in EVENT_FIELD's order (verbs/events.rs),
        // which must be each kind's order in the table
        let events = want["events"].as_object().expect("events");
        let mut kinds = names(spec::EVENT.all());
        kinds.sort();
        let mut listed: Vec<String> = events.keys().cloned().collect();
        listed.sort();
        assert_eq!(kinds, listed);
        let order = names(spec::EVENT_FIELD.all());
        for (kind, fields) in events {
            let at: Vec<usize> = strings(fields)
                .iter()
                .map(|f| order.iter().position(|o| o == f).expect("a known field"))
                .collect();
            assert!(at.windows(2).all(|w| w[0] < w[1]), "{kind}: {fields}");
        }
        assert_eq!(
            want["maxOptionsBytes"].as_u64(),
            Some(MAX_OPTIONS_BYTES as u64)
        );
        let options = want["options"].as_array().expect("options");
        assert_eq!(options.len(), spec::OPTIONS.len(), "every option, no more");
        for (o, want) in spec::OPTIONS.iter().zip(options) {
            assert_eq!(Some(o.name), want["name"].as_str());
            assert_eq!(
                gate_name(o.gate),
                want["gate"].as_str().unwrap(),
                "{}",
                o.name
            );
            assert_eq!(o.needs, want["needs"].as_str(), "{}", o.name);
        }
    }

    /// Every refusal text is the spec's: each sample the spec renders, rebuilt as this module's
    /// refusal, gives the same bytes; and every refusal of this module has a sample.
    #[test]
    fn refusal_texts_are_the_spec() {
        let want = spec();
        let mut seen = std::collections::HashSet::new();
        for s in want["samples"].as_array().expect("samples") {
            let verb = verb(s["verb"].as_str().unwrap());
            let p = |k: &str| s["params"][k].as_str().unwrap_or_default().to_string();
            let all_args = || verb.args.iter().chain(verb.group);
            let arg = |name: String| {
                all_args()
                    .map(|a| a.name)
                    .chain(spec::OPTIONS.iter().map(|o| o.name))
                    .find(|a| *a == name)
                    .expect("a known arg or option")
            };
            let ids = || p("ids").split(' ').map(|i| i.as_bytes().to_vec()).collect();
            let name = s["refusal"].as_str().unwrap();
            let bytes_gate = all_args().find_map(|a| match a.gate {
                Gate::Bytes { refusal, .. } if refusal == name => Some(refusal),
                _ => None,
            });
            let r = match name {
                "arity" => Refusal::Arity,
                "layout" => Refusal::Layout,
                "fenced" => Refusal::Fenced(p("found")),
                "batch" => Refusal::Batch,
                "job-id" => Refusal::NotJobId,
                "name" => Refusal::NotName(arg(p("arg"))),
                "positive" => Refusal::Number(arg(p("arg")), true),
                "non-negative" => Refusal::Number(arg(p("arg")), false),
                "too-large" => Refusal::TooLarge(arg(p("arg")), p("max").parse().unwrap()),
                _ if bytes_gate.is_some() => {
                    Refusal::TooLong(bytes_gate.unwrap(), p("limit").parse().unwrap())
                }
                "options" => Refusal::OptionsTooLong,
                "option-form" => Refusal::OptionForm,
                "option-unknown" => Refusal::OptionUnknown(p("option").into_bytes()),
                "option-repeated" => Refusal::OptionRepeated(arg(p("option"))),
                "option-needs" => Refusal::OptionNeeds(arg(p("option")), arg(p("needs"))),
                "repeated" => Refusal::Repeated(p("id").into_bytes()),
                "duplicate" => Refusal::Duplicate(p("id").into_bytes()),
                "noperm" => Refusal::NoPerm,
                "wrongtype" => Refusal::WrongType,
                "lease-lost" => Refusal::LeaseLost(ids()),
                "active" => Refusal::Active(ids()),
                "not-dead" => Refusal::NotDead(ids()),
                "not-scheduled" => Refusal::NotScheduled(ids()),
                "counter" => Refusal::NotInteger,
                "migrating" => Refusal::Migrating,
                other => panic!("the spec has a refusal this module does not know: {other}"),
            };
            assert_eq!(r.name(), name);
            assert_eq!(
                String::from_utf8(r.text(verb)).unwrap(),
                s["text"].as_str().unwrap(),
                "{} {}",
                verb.name,
                r.name()
            );
            seen.insert(r.name());
        }
        let bytes = VERBS
            .iter()
            .flat_map(|c| c.verb.args.iter().chain(c.verb.group))
            .filter_map(|a| match a.gate {
                Gate::Bytes { refusal, .. } => Some(Refusal::TooLong(refusal, 0)),
                _ => None,
            });
        let all = [
            Refusal::Arity,
            Refusal::Layout,
            Refusal::Fenced(String::new()),
            Refusal::Batch,
            Refusal::NotJobId,
            Refusal::NotName(""),
            Refusal::Number("", true),
            Refusal::Number("", false),
            Refusal::TooLarge("", 0),
            Refusal::OptionsTooLong,
            Refusal::OptionForm,
            Refusal::OptionUnknown(vec![]),
            Refusal::OptionRepeated(""),
            Refusal::OptionNeeds("", ""),
            Refusal::Repeated(vec![]),
            Refusal::Duplicate(vec![]),
            Refusal::NoPerm,
            Refusal::WrongType,
            Refusal::LeaseLost(vec![]),
            Refusal::Active(vec![]),
            Refusal::NotDead(vec![]),
            Refusal::NotScheduled(vec![]),
            Refusal::NotInteger,
            Refusal::Migrating,
        ];
        for r in all.into_iter().chain(bytes) {
            assert!(seen.contains(r.name()), "no spec sample for {}", r.name());
        }
    }

    #[test]
    fn fence_names_a_number_or_nothing() {
        assert_eq!(fence_found(b"4"), "4");
        assert_eq!(fence_found(b"x\r\nsecret"), "unknown");
        assert_eq!(fence_found(b""), "unknown");
    }

    #[test]
    fn groups() {
        let ack = verb("EMQ.ACK");
        assert_eq!(ack.groups(3), None);
        assert_eq!(ack.groups(5), None);
        assert_eq!(ack.groups(6), Some(Ok(1)));
        assert_eq!(ack.groups(7), None);
        assert_eq!(ack.groups(3 + 3 * MAX_BATCH), Some(Ok(MAX_BATCH)));
        assert_eq!(ack.groups(3 + 3 * (MAX_BATCH + 1)), Some(Err(())));
    }
}
