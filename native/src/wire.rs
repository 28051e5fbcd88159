//! Wire-4 facts shared by every verb: each verb's call shape (declared keys by role, arguments with
//! their gates) and the exact refusal texts. Pure code. The spec these mirror is the TypeScript
//! `lib/wire`; the unit tests below check this file against it through `tests/vectors/wire.json`.

/// The wire this module speaks.
pub const WIRE: i64 = 4;

/// A declared key's role (the spec's `KeyRole`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `emq:{q}:job:<id>`, `<id>` being the call's id argument.
    Row,
    /// `emq:{q}:pending`.
    Pending,
    /// `emq:{q}:active`.
    Active,
    /// `emq:{q}:schedule`.
    Schedule,
    /// `emq:{q}:dead`.
    Dead,
    /// `emq:{q}:` (never opened).
    Base,
}

impl Role {
    /// The spec's name of the role.
    pub const fn name(self) -> &'static str {
        match self {
            Role::Row => "row",
            Role::Pending => "pending",
            Role::Active => "active",
            Role::Schedule => "schedule",
            Role::Dead => "dead",
            Role::Base => "base",
        }
    }

    /// The key type a role's key carries after `}:` (a row's is `job:` + id, not this).
    pub const fn ty(self) -> &'static [u8] {
        match self {
            Role::Row => crate::keyspace::JOB,
            Role::Pending => crate::keyspace::PENDING,
            Role::Active => crate::keyspace::ACTIVE,
            Role::Schedule => crate::keyspace::SCHEDULE,
            Role::Dead => crate::keyspace::DEAD,
            Role::Base => b"",
        }
    }
}

/// How an argument is checked at step 4 (the spec's `Gate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Starts with `JOB`.
    JobId,
    /// 1 to 15 ASCII digits, at least `min` (0 or 1).
    Number { min: u64 },
    /// At most `emq.max-payload` bytes.
    Payload,
    /// At most 4096 bytes.
    Reason,
}

/// One argument: its spec name and gate.
#[derive(Debug)]
pub struct Arg {
    /// The spec's name (`lease_ms`); number refusals name it.
    pub name: &'static str,
    /// Its gate.
    pub gate: Gate,
}

/// One verb's call shape: `EMQ.<VERB> <numkeys> <key…> <arg…>`.
#[derive(Debug)]
pub struct Verb {
    /// Upper-case name used in error texts (`EMQ.ENQUEUE`).
    pub name: &'static str,
    /// Registered command name (`emq.enqueue`).
    pub command: &'static str,
    /// Declared keys, by role, in order.
    pub keys: &'static [Role],
    /// Arguments after the keys, in order.
    pub args: &'static [Arg],
}

impl Verb {
    /// The exact argv length: command, numkeys, keys, arguments.
    pub const fn argc(&self) -> usize {
        2 + self.keys.len() + self.args.len()
    }

    /// Where the `id` argument is among the arguments, if the verb has one.
    pub fn id_arg(&self) -> Option<usize> {
        self.args.iter().position(|a| a.gate == Gate::JobId)
    }
}

/// Why a call is refused; every refusal writes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Step 1: numkeys or the argument count is not the verb's.
    Arity,
    /// Step 2: the declared keys are not one queue's keys in the verb's layout.
    Layout,
    /// Step 3: the server speaks another wire (the value found).
    Fenced(Vec<u8>),
    /// Step 4: the id lacks the `JOB` prefix.
    NotJobId,
    /// Step 4: a number argument is malformed (its name, and whether it must be ≥ 1).
    Number(&'static str, bool),
    /// Step 4: the payload is longer than the configured limit (the limit).
    PayloadTooLarge(i64),
    /// Step 4: the reason is longer than 4096 bytes.
    ReasonTooLarge,
    /// Step 5: a key holds the wrong Valkey type.
    WrongType,
    /// Step 5: ENQUEUE/SCHEDULE of an id whose row exists.
    Duplicate,
    /// Step 5: ACK/RETRY/BURY of an id not in active or without a row.
    NotActive,
    /// Step 5: CLAIM of a row whose `attempts` is not an integer (HINCRBY's refusal).
    NotInteger,
}

impl Refusal {
    /// The spec's name of the refusal (`lib/wire/refusals.ts`).
    pub fn name(&self) -> &'static str {
        match self {
            Refusal::Arity => "arity",
            Refusal::Layout => "layout",
            Refusal::Fenced(_) => "fenced",
            Refusal::NotJobId => "job-id",
            Refusal::Number(_, true) => "positive",
            Refusal::Number(_, false) => "non-negative",
            Refusal::PayloadTooLarge(_) => "payload",
            Refusal::ReasonTooLarge => "reason",
            Refusal::WrongType => "wrongtype",
            Refusal::Duplicate => "duplicate",
            Refusal::NotActive => "not-active",
            Refusal::NotInteger => "counter",
        }
    }

    /// The exact error text (with its code) for `verb`, as `docs/WIRE.md` fixes it.
    pub fn text(&self, verb: &Verb) -> Vec<u8> {
        let v = verb.name;
        let t = match self {
            Refusal::Arity => format!("ERR wrong number of arguments for '{v}' command"),
            Refusal::Layout => format!("ERR {v} keys do not match the wire-4 layout"),
            Refusal::Fenced(w) => {
                let mut out = format!("ERR {v} fenced: this server speaks wire ").into_bytes();
                out.extend_from_slice(w);
                out.extend_from_slice(b", not wire 4");
                return sanitize(out);
            }
            Refusal::NotJobId => format!("ERR {v} id must be a JOB id"),
            Refusal::Number(field, true) => format!("ERR {v} {field} must be a positive integer"),
            Refusal::Number(field, false) => {
                format!("ERR {v} {field} must be a non-negative integer")
            }
            Refusal::PayloadTooLarge(limit) => format!("ERR {v} payload exceeds {limit} bytes"),
            Refusal::ReasonTooLarge => {
                format!("ERR {v} reason exceeds {} bytes", crate::gates::MAX_REASON)
            }
            Refusal::WrongType => {
                "WRONGTYPE Operation against a key holding the wrong kind of value".to_string()
            }
            Refusal::Duplicate => format!("ERR {v} duplicate id"),
            Refusal::NotActive => format!("ERR {v} job is not active"),
            Refusal::NotInteger => "ERR hash value is not an integer".to_string(),
        };
        t.into_bytes()
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
            Gate::Number { min } => format!("number>={min}"),
            Gate::Payload => "bytes:payload".into(),
            Gate::Reason => format!("bytes:reason<={}", crate::gates::MAX_REASON),
        }
    }

    /// Every verb the module registers is the spec's: name, command, numkeys, key roles, arguments
    /// (names and gates), in the spec's order.
    #[test]
    fn verbs_are_the_spec() {
        let spec = spec();
        assert_eq!(spec["wire"].as_i64(), Some(WIRE));
        let verbs = spec["verbs"].as_array().expect("verbs");
        assert_eq!(
            verbs.len(),
            VERBS.len(),
            "the module registers every verb of the spec, no more"
        );
        for (v, want) in VERBS.iter().map(|(v, _)| v).zip(verbs) {
            assert_eq!(v.name, format!("EMQ.{}", want["verb"].as_str().unwrap()));
            assert_eq!(v.command, v.name.to_lowercase());
            let roles: Vec<&str> = v.keys.iter().map(|r| r.name()).collect();
            let want_roles: Vec<&str> = want["keys"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap())
                .collect();
            assert_eq!(roles, want_roles, "{} keys", v.name);
            let args: Vec<(String, String)> = v
                .args
                .iter()
                .map(|a| (a.name.to_string(), gate_name(a.gate)))
                .collect();
            let want_args: Vec<(String, String)> = want["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    (
                        a["name"].as_str().unwrap().to_string(),
                        a["gate"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            assert_eq!(args, want_args, "{} args", v.name);
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
                    .find(|a| a.name == name)
                    .map(|a| a.name)
                    .expect("a known arg")
            };
            let r = match s["refusal"].as_str().unwrap() {
                "arity" => Refusal::Arity,
                "layout" => Refusal::Layout,
                "fenced" => Refusal::Fenced(p("found").into_bytes()),
                "job-id" => Refusal::NotJobId,
                "positive" => Refusal::Number(arg(p("arg")), true),
                "non-negative" => Refusal::Number(arg(p("arg")), false),
                "payload" => Refusal::PayloadTooLarge(p("limit").parse().unwrap()),
                "reason" => Refusal::ReasonTooLarge,
                "wrongtype" => Refusal::WrongType,
                "duplicate" => Refusal::Duplicate,
                "not-active" => Refusal::NotActive,
                "counter" => Refusal::NotInteger,
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
            Refusal::Fenced(vec![]),
            Refusal::NotJobId,
            Refusal::Number("", true),
            Refusal::Number("", false),
            Refusal::PayloadTooLarge(0),
            Refusal::ReasonTooLarge,
            Refusal::WrongType,
            Refusal::Duplicate,
            Refusal::NotActive,
            Refusal::NotInteger,
        ];
        for r in all {
            assert!(seen.contains(r.name()), "no spec sample for {}", r.name());
        }
    }

    #[test]
    fn fence_value_is_one_line() {
        let (v, _) = &VERBS[0];
        assert_eq!(
            String::from_utf8(Refusal::Fenced(b"a\r\nb\0".to_vec()).text(v)).unwrap(),
            "ERR EMQ.ENQUEUE fenced: this server speaks wire a  b , not wire 4"
        );
    }
}
