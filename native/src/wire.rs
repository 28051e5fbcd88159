//! Wire-4 facts shared by every verb: the call shape of each verb and the exact refusal texts of
//! `docs/WIRE.md`. Pure code.

/// The wire this module speaks.
pub const WIRE: i64 = 4;

/// One verb's call shape: `EMQ.<VERB> <numkeys> <key…> <arg…>`.
#[derive(Debug)]
pub struct Verb {
    /// Upper-case name used in error texts (`EMQ.ENQUEUE`).
    pub name: &'static str,
    /// Registered command name, NUL-terminated (`emq.enqueue\0`).
    pub command: &'static str,
    /// Exact number of keys, as the decimal bytes the call must carry.
    pub numkeys: &'static [u8],
    /// Exact number of keys.
    pub keys: usize,
    /// Exact number of arguments after the keys.
    pub args: usize,
}

impl Verb {
    /// The exact argv length: command, numkeys, keys, arguments.
    pub const fn argc(&self) -> usize {
        2 + self.keys + self.args
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
    /// Step 4: a number argument is malformed (`field`, and whether it must be ≥ 1).
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
            Refusal::ReasonTooLarge => format!("ERR {v} reason exceeds 4096 bytes"),
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

    const ENQUEUE: Verb = Verb {
        name: "EMQ.ENQUEUE",
        command: "emq.enqueue\0",
        numkeys: b"2",
        keys: 2,
        args: 2,
    };

    fn text(r: Refusal) -> String {
        String::from_utf8(r.text(&ENQUEUE)).unwrap()
    }

    #[test]
    fn texts() {
        assert_eq!(ENQUEUE.argc(), 6);
        assert_eq!(
            text(Refusal::Arity),
            "ERR wrong number of arguments for 'EMQ.ENQUEUE' command"
        );
        assert_eq!(
            text(Refusal::Layout),
            "ERR EMQ.ENQUEUE keys do not match the wire-4 layout"
        );
        assert_eq!(
            text(Refusal::Fenced(b"3".to_vec())),
            "ERR EMQ.ENQUEUE fenced: this server speaks wire 3, not wire 4"
        );
        assert_eq!(
            text(Refusal::Fenced(b"a\r\nb\0".to_vec())),
            "ERR EMQ.ENQUEUE fenced: this server speaks wire a  b , not wire 4"
        );
        assert_eq!(
            text(Refusal::NotJobId),
            "ERR EMQ.ENQUEUE id must be a JOB id"
        );
        assert_eq!(
            text(Refusal::Number("due_ms", false)),
            "ERR EMQ.ENQUEUE due_ms must be a non-negative integer"
        );
        assert_eq!(
            text(Refusal::Number("limit", true)),
            "ERR EMQ.ENQUEUE limit must be a positive integer"
        );
        assert_eq!(
            text(Refusal::PayloadTooLarge(1048576)),
            "ERR EMQ.ENQUEUE payload exceeds 1048576 bytes"
        );
        assert_eq!(
            text(Refusal::ReasonTooLarge),
            "ERR EMQ.ENQUEUE reason exceeds 4096 bytes"
        );
        assert_eq!(
            text(Refusal::WrongType),
            "WRONGTYPE Operation against a key holding the wrong kind of value"
        );
        assert_eq!(text(Refusal::Duplicate), "ERR EMQ.ENQUEUE duplicate id");
        assert_eq!(
            text(Refusal::NotActive),
            "ERR EMQ.ENQUEUE job is not active"
        );
    }
}
