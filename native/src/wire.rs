//! Wire-5 facts shared by every verb: each verb's call shape (one declared key, the queue's `meta`;
//! fixed arguments and a repeated group, each with its gate) and the exact refusal texts. Pure
//! code. The spec these mirror is the TypeScript `lib/wire`; the unit tests below check this file
//! against it through `tests/vectors/wire.json`.

/// The wire this module speaks.
pub const WIRE: i64 = 5;

/// How an argument is checked at step 4 (the spec's `Gate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Starts with `JOB`.
    JobId,
    /// 1 to 15 ASCII digits, at least `min` (0 or 1), at most `max` when bounded.
    Number { min: u64, max: Option<u64> },
    /// At most `emq.max-payload` bytes.
    Payload,
    /// At most 4096 bytes.
    Reason,
    /// At most 65536 bytes.
    Progress,
}

/// One argument: its spec name and gate.
#[derive(Debug)]
pub struct Arg {
    /// The spec's name (`lease_ms`); number refusals name it.
    pub name: &'static str,
    /// Its gate.
    pub gate: Gate,
}

/// A number argument that must be ≥ 1.
pub const fn positive(name: &'static str) -> Arg {
    Arg {
        name,
        gate: Gate::Number { min: 1, max: None },
    }
}

/// The id of a job, gated on its `JOB` prefix.
pub const ID: Arg = Arg {
    name: "id",
    gate: Gate::JobId,
};
/// A lease token.
pub const TOKEN: Arg = positive("token");

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
    /// Whether it admits jobs: refused under `maxmemory` (`deny-oom`).
    pub admits: bool,
}

/// Most jobs one call may carry.
pub const MAX_BATCH: usize = 10_000;

/// Most due ids one CLAIM moves schedule → pending and active → pending before it claims.
pub const CLAIM_MOVE_LIMIT: u64 = 1000;

/// Longest progress value PROGRESS accepts.
pub const MAX_PROGRESS: usize = 65536;

/// Dead jobs a queue keeps when its `meta` sets no `dead_max` (0 there: no limit).
pub const DEAD_MAX_DEFAULT: i64 = 10_000;

/// How long a dead job is kept when `meta` sets no `dead_age_ms` (0 there: no limit): 30 days.
pub const DEAD_AGE_DEFAULT_MS: i64 = 2_592_000_000;

/// Most dead jobs one call trims.
pub const TRIM_LIMIT: i64 = 1000;

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
    /// Step 4: a number argument is malformed (its name, and whether it must be ≥ 1).
    Number(&'static str, bool),
    /// Step 4: a number argument above its bound (its name, the bound).
    TooLarge(&'static str, u64),
    /// Step 4: a payload is longer than the configured limit (the limit).
    PayloadTooLarge(i64),
    /// Step 4: a reason is longer than 4096 bytes.
    ReasonTooLarge,
    /// Step 4: a progress value is longer than 65536 bytes.
    ProgressTooLarge,
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
            Refusal::Number(_, true) => "positive",
            Refusal::Number(_, false) => "non-negative",
            Refusal::TooLarge(..) => "too-large",
            Refusal::PayloadTooLarge(_) => "payload",
            Refusal::ReasonTooLarge => "reason",
            Refusal::ProgressTooLarge => "progress",
            Refusal::Repeated(_) => "repeated",
            Refusal::Duplicate(_) => "duplicate",
            Refusal::NoPerm => "noperm",
            Refusal::WrongType => "wrongtype",
            Refusal::LeaseLost(_) => "lease-lost",
            Refusal::Active(_) => "active",
            Refusal::NotDead(_) => "not-dead",
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
            Refusal::Layout => format!("ERR {v} keys do not match the wire-5 layout"),
            Refusal::Fenced(w) => {
                format!("ERR {v} fenced: this server speaks wire {w}, not wire 5")
            }
            Refusal::Batch => format!("ERR {v} at most {MAX_BATCH} jobs per call"),
            Refusal::NotJobId => format!("ERR {v} id must be a JOB id"),
            Refusal::Number(field, true) => format!("ERR {v} {field} must be a positive integer"),
            Refusal::Number(field, false) => {
                format!("ERR {v} {field} must be a non-negative integer")
            }
            Refusal::TooLarge(field, max) => format!("ERR {v} {field} must be at most {max}"),
            Refusal::PayloadTooLarge(limit) => format!("ERR {v} payload exceeds {limit} bytes"),
            Refusal::ReasonTooLarge => {
                format!("ERR {v} reason exceeds {} bytes", crate::gates::MAX_REASON)
            }
            Refusal::ProgressTooLarge => format!("ERR {v} progress exceeds {MAX_PROGRESS} bytes"),
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
            Refusal::LeaseLost(ids) | Refusal::Active(ids) | Refusal::NotDead(ids) => {
                let head = match self {
                    Refusal::LeaseLost(_) => "lease lost",
                    Refusal::Active(_) => "job is active",
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
    use crate::verbs::VERBS;
    use serde_json::Value;

    fn spec() -> Value {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/wire.json");
        let text = std::fs::read_to_string(path).expect("tests/vectors/wire.json is readable");
        serde_json::from_str(&text).expect("tests/vectors/wire.json is JSON")
    }

    fn gate_name(g: Gate) -> String {
        match g {
            Gate::JobId => "job-id".into(),
            Gate::Number { min, max: None } => format!("number>={min}"),
            Gate::Number {
                min,
                max: Some(max),
            } => format!("number>={min}<={max}"),
            Gate::Payload => "bytes:payload".into(),
            Gate::Reason => format!("bytes:reason<={}", crate::gates::MAX_REASON),
            Gate::Progress => format!("bytes:progress<={MAX_PROGRESS}"),
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

    /// Every verb the module registers is the spec's, in the spec's order: name, command, fixed
    /// arguments and group (names and gates), whether it admits jobs.
    #[test]
    fn verbs_are_the_spec() {
        let spec = spec();
        assert_eq!(spec["wire"].as_i64(), Some(WIRE));
        assert_eq!(spec["maxBatch"].as_u64(), Some(MAX_BATCH as u64));
        assert_eq!(spec["claimMoveLimit"].as_u64(), Some(CLAIM_MOVE_LIMIT));
        assert_eq!(spec["deadMaxDefault"].as_i64(), Some(DEAD_MAX_DEFAULT));
        assert_eq!(spec["deadAgeDefaultMs"].as_i64(), Some(DEAD_AGE_DEFAULT_MS));
        assert_eq!(spec["trimLimit"].as_i64(), Some(TRIM_LIMIT));
        let verbs = spec["verbs"].as_array().expect("verbs");
        assert_eq!(
            verbs.len(),
            VERBS.len(),
            "the module registers every verb of the spec, no more"
        );
        for (v, want) in VERBS.iter().map(|(v, _)| v).zip(verbs) {
            assert_eq!(v.name, format!("EMQ.{}", want["verb"].as_str().unwrap()));
            assert_eq!(v.command, v.name.to_lowercase());
            assert_eq!(args(v.args), spec_args(&want["args"]), "{} args", v.name);
            assert_eq!(args(v.group), spec_args(&want["group"]), "{} group", v.name);
            assert_eq!(
                Some(v.admits),
                want["admits"].as_bool(),
                "{} admits",
                v.name
            );
        }
    }

    /// Every refusal text is the spec's: each sample the spec renders, rebuilt as this module's
    /// refusal, gives the same bytes; and every refusal of this module has a sample.
    #[test]
    fn refusal_texts_are_the_spec() {
        let spec = spec();
        let mut seen = std::collections::HashSet::new();
        for s in spec["samples"].as_array().expect("samples") {
            let verb = VERBS
                .iter()
                .map(|(v, _)| v)
                .find(|v| v.name == s["verb"].as_str().unwrap())
                .expect("a sample's verb is registered");
            let p = |k: &str| s["params"][k].as_str().unwrap_or_default().to_string();
            let arg = |name: String| {
                verb.args
                    .iter()
                    .chain(verb.group)
                    .find(|a| a.name == name)
                    .map(|a| a.name)
                    .expect("a known arg")
            };
            let r = match s["refusal"].as_str().unwrap() {
                "arity" => Refusal::Arity,
                "layout" => Refusal::Layout,
                "fenced" => Refusal::Fenced(p("found")),
                "batch" => Refusal::Batch,
                "job-id" => Refusal::NotJobId,
                "positive" => Refusal::Number(arg(p("arg")), true),
                "non-negative" => Refusal::Number(arg(p("arg")), false),
                "too-large" => Refusal::TooLarge(arg(p("arg")), p("max").parse().unwrap()),
                "payload" => Refusal::PayloadTooLarge(p("limit").parse().unwrap()),
                "reason" => Refusal::ReasonTooLarge,
                "progress" => Refusal::ProgressTooLarge,
                "repeated" => Refusal::Repeated(p("id").into_bytes()),
                "duplicate" => Refusal::Duplicate(p("id").into_bytes()),
                "noperm" => Refusal::NoPerm,
                "wrongtype" => Refusal::WrongType,
                "lease-lost" => {
                    Refusal::LeaseLost(p("ids").split(' ').map(|i| i.as_bytes().to_vec()).collect())
                }
                "active" => {
                    Refusal::Active(p("ids").split(' ').map(|i| i.as_bytes().to_vec()).collect())
                }
                "not-dead" => {
                    Refusal::NotDead(p("ids").split(' ').map(|i| i.as_bytes().to_vec()).collect())
                }
                "counter" => Refusal::NotInteger,
                "migrating" => Refusal::Migrating,
                other => panic!("the spec has a refusal this module does not know: {other}"),
            };
            assert_eq!(r.name(), s["refusal"].as_str().unwrap());
            assert_eq!(
                String::from_utf8(r.text(verb)).unwrap(),
                s["text"].as_str().unwrap(),
                "{} {}",
                verb.name,
                r.name()
            );
            seen.insert(r.name());
        }
        let all = [
            Refusal::Arity,
            Refusal::Layout,
            Refusal::Fenced(String::new()),
            Refusal::Batch,
            Refusal::NotJobId,
            Refusal::Number("", true),
            Refusal::Number("", false),
            Refusal::TooLarge("", 0),
            Refusal::PayloadTooLarge(0),
            Refusal::ReasonTooLarge,
            Refusal::ProgressTooLarge,
            Refusal::Repeated(vec![]),
            Refusal::Duplicate(vec![]),
            Refusal::NoPerm,
            Refusal::WrongType,
            Refusal::LeaseLost(vec![]),
            Refusal::Active(vec![]),
            Refusal::NotDead(vec![]),
            Refusal::NotInteger,
            Refusal::Migrating,
        ];
        for r in all {
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
        let (ack, _) = &VERBS.iter().find(|(v, _)| v.name == "EMQ.ACK").unwrap();
        assert_eq!(ack.groups(3), None);
        assert_eq!(ack.groups(5), Some(Ok(1)));
        assert_eq!(ack.groups(6), None);
        assert_eq!(ack.groups(3 + 2 * MAX_BATCH), Some(Ok(MAX_BATCH)));
        assert_eq!(ack.groups(3 + 2 * (MAX_BATCH + 1)), Some(Err(())));
    }
}
