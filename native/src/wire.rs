//! Wire facts shared by every verb, as types: an argument's gate ([`Gate`]), a verb's call shape
//! ([`Verb`]: one declared key, the queue's `meta`; fixed arguments and a repeated group, each with
//! its gate), how a refusal's text is written ([`Text`]), and the [`names!`] sets of stored names.
//! Pure code. The values — every verb, argument and constant of the spec `lib/wire` — are generated
//! into `spec.rs`, the refusals with their texts into `refusal.rs`; the unit tests below check both
//! against `tests/vectors/wire.json`.

use crate::spec::MAX_BATCH;

pub use crate::refusal::Refusal;

/// How an argument is checked at step 4 (the spec's `Gate`).
#[derive(Clone, Copy, Debug)]
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
    /// At most `limit` bytes, else refused as `refusal` of the limit (`Refusal::Payload`, …).
    Bytes {
        refusal: fn(i64) -> Refusal,
        limit: Limit,
    },
    /// A job's options: `options::parse` (the spec's `OPTIONS`, each value through its gate).
    Options,
}

impl Refusal {
    /// A number argument's refusal when it is malformed: `positive` when its gate's `min` is 1,
    /// else `non-negative`.
    pub fn number(arg: &'static str, min: u64) -> Refusal {
        if min >= 1 {
            Refusal::Positive(arg)
        } else {
            Refusal::NonNegative(arg)
        }
    }
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

/// A refusal's text as `refusal.rs` writes it: the template's literal pieces and its parameters,
/// each written as the wire writes its kind.
#[derive(Default)]
pub struct Text(Vec<u8>);

impl Text {
    /// A literal piece, the verb, or a name parameter (an argument's, an option's, a fence value).
    pub fn text(&mut self, s: &str) {
        self.0.extend_from_slice(s.as_bytes());
    }

    /// A number parameter (a limit, a bound).
    pub fn number(&mut self, n: impl std::fmt::Display) {
        self.0.extend_from_slice(n.to_string().as_bytes());
    }

    /// A job id as sent: an error reply is one line, so CR, LF and NUL are written as spaces.
    pub fn id(&mut self, id: &[u8]) {
        let one_line = |&b: &u8| match b {
            b'\r' | b'\n' | 0 => b' ',
            b => b,
        };
        self.0.extend(id.iter().map(one_line));
    }

    /// Job ids, each as [`Text::id`], joined by spaces.
    pub fn ids(&mut self, ids: &[Vec<u8>]) {
        for (i, id) in ids.iter().enumerate() {
            if i > 0 {
                self.0.push(b' ');
            }
            self.id(id);
        }
    }

    /// Any bytes (an unknown option's key): printable ASCII only, others as `?`, so that every
    /// client can parse the error.
    pub fn printable(&mut self, bytes: &[u8]) {
        let printable = |&b: &u8| match b {
            0x20..0x7f => b,
            _ => b'?',
        };
        self.0.extend(bytes.iter().map(printable));
    }

    /// The text written.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

/// A refusal parameter read from its text in a sample of `tests/vectors/wire.json`
/// (`Refusal::from_sample`).
#[cfg(test)]
pub trait Sample {
    /// The parameter of text `text`.
    fn sample(text: String) -> Self;
}

#[cfg(test)]
mod sample {
    use super::Sample;

    impl Sample for String {
        fn sample(text: String) -> Self {
            text
        }
    }

    /// An argument's or option's name: the unit tests check that it is one of the spec's.
    impl Sample for &'static str {
        fn sample(text: String) -> Self {
            Box::leak(text.into_boxed_str())
        }
    }

    impl Sample for Vec<u8> {
        fn sample(text: String) -> Self {
            text.into_bytes()
        }
    }

    /// Ids, space-separated.
    impl Sample for Vec<Vec<u8>> {
        fn sample(text: String) -> Self {
            text.split(' ').map(|i| i.as_bytes().to_vec()).collect()
        }
    }

    macro_rules! number {
        ($($t:ty),*) => {$(
            impl Sample for $t {
                fn sample(text: String) -> Self {
                    text.parse().expect("a number parameter")
                }
            }
        )*};
    }
    number!(i64, u64, usize);
}

/// The fence value as the refusal names it: its number when it is 1 to 15 digits, else `unknown`.
pub fn fence_found(value: &[u8]) -> String {
    match crate::gates::digits(value) {
        Some(_) => String::from_utf8_lossy(value).into_owned(),
        None => "unknown".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{self, verb::ALL, MAX_OPTIONS_BYTES};
    use serde_json::Value;

    fn spec() -> Value {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/wire.json");
        let text = std::fs::read_to_string(path).expect("tests/vectors/wire.json is readable");
        serde_json::from_str(&text).expect("tests/vectors/wire.json is JSON")
    }

    fn verb(name: &str) -> &'static Verb {
        ALL.iter()
            .find(|v| v.name == name)
            .expect("a verb of the spec")
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
            } => format!("bytes:{}", refusal(0).name()),
            Gate::Bytes {
                refusal,
                limit: Limit::Fixed(n),
            } => format!("bytes:{}<={n}", refusal(0).name()),
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
        assert_eq!(verbs.len(), ALL.len(), "every verb of the spec, no more");
        for (v, want) in ALL.iter().zip(verbs) {
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
    /// refusal, gives the same bytes; every refusal of the spec is one of this module's, in the
    /// spec's order, and has a sample; a name parameter is an argument or option of the verb; and
    /// each bytes gate refuses as the spec says (a sample of its refusal for every verb it gates).
    #[test]
    fn refusal_texts_are_the_spec() {
        let want = spec();
        let templates = want["refusals"].as_object().expect("refusals");
        let mut spec_names: Vec<&str> = templates.keys().map(String::as_str).collect();
        let mut names = Refusal::NAMES.to_vec();
        spec_names.sort_unstable();
        names.sort_unstable();
        assert_eq!(names, spec_names, "every refusal of the spec, no more");
        let mut seen = std::collections::HashSet::new();
        for s in want["samples"].as_array().expect("samples") {
            let verb = verb(s["verb"].as_str().unwrap());
            let name = s["refusal"].as_str().unwrap();
            let p = |k: &str| s["params"][k].as_str().unwrap_or_default().to_string();
            let named = verb
                .args
                .iter()
                .chain(verb.group)
                .map(|a| a.name)
                .chain(spec::OPTIONS.iter().map(|o| o.name));
            for k in ["arg", "needs"]
                .into_iter()
                .chain((name != "option-unknown").then_some("option"))
            {
                let given = s["params"][k].as_str();
                assert!(
                    given.is_none_or(|g| named.clone().any(|n| n == g)),
                    "{} {name}: {k} {given:?} is not an argument or option of the verb",
                    verb.name
                );
            }
            let r = Refusal::from_sample(name, p).unwrap_or_else(|| {
                panic!("the spec has a refusal this module does not know: {name}")
            });
            assert_eq!(r.name(), name);
            assert_eq!(
                String::from_utf8(r.text(verb)).unwrap(),
                s["text"].as_str().unwrap(),
                "{} {name}",
                verb.name
            );
            seen.insert((verb.name, name));
        }
        for name in Refusal::NAMES {
            assert!(
                seen.iter().any(|&(_, n)| n == name),
                "no spec sample for {name}"
            );
        }
        for v in ALL {
            for a in v.args.iter().chain(v.group) {
                if let Gate::Bytes { refusal, .. } = a.gate {
                    let name = refusal(0).name();
                    assert!(
                        seen.contains(&(v.name, name)),
                        "{}: no sample of {name}",
                        v.name
                    );
                }
            }
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
