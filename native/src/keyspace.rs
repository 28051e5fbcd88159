//! The owned keyspace, byte for byte the mirror of the TypeScript twin (`splitQueueKey`,
//! `validQueue`, `Keyspace.fromKey`). Pure code: no server call, unit-tested against the shared
//! vectors in `tests/vectors/keys.json`.
//!
//! Every per-queue key is `emq:{<q>}:<type>`. The module recovers one queue name from one declared
//! key and rebuilds every other key from that name, so a call can only touch one queue (one
//! hashtag, one cluster slot).

/// The literal every key starts with, up to and including the opening brace.
pub const PREFIX: &[u8] = b"emq:{";

/// The bytes after the name: the closing brace and the colon before the type.
const CLOSE: &[u8] = b"}:";

/// Type of the ready list.
pub const PENDING: &[u8] = b"pending";
/// Type of the claimed set.
pub const ACTIVE: &[u8] = b"active";
/// Type of the delayed set.
pub const SCHEDULE: &[u8] = b"schedule";
/// Type of the buried set.
pub const DEAD: &[u8] = b"dead";
/// Type of the queue's facts hash, the one key every verb declares.
pub const META: &[u8] = b"meta";
/// Type of the markers idle workers of the scripts backend wait on (a sorted set).
pub const WAKE: &[u8] = b"wake";
/// A row's type is this prefix followed by the job id.
pub const JOB: &[u8] = b"job:";
/// Type of the lanes claims serve, round-robin (a list; the default lane is the empty element).
pub const RING: &[u8] = b"ring";
/// Type of the index of lanes with a state, scored by backlog (a sorted set).
pub const LANES: &[u8] = b"lanes";
/// Type of the lanes parked until a time (a sorted set).
pub const PARKED: &[u8] = b"parked";
/// Type of the index of schedulers, scored by their next run (a sorted set).
pub const SCHEDULERS: &[u8] = b"schedulers";
/// A scheduler's hash is this prefix followed by its name.
pub const SCHEDULER: &[u8] = b"scheduler:";
/// Type of the deduplication keys, each with its job and window end (a hash).
pub const DEDUP: &[u8] = b"dedup";
/// Type of the deduplication keys whose job settled, scored by their window end (a sorted set).
pub const DEDUP_TTL: &[u8] = b"dedup_ttl";
/// Type of the completed jobs kept with their result, scored by when they finished (a sorted set).
pub const COMPLETED: &[u8] = b"completed";
/// Type of the queue's transitions (a stream, bounded by `meta`'s `events_max`).
pub const EVENTS: &[u8] = b"events";
/// Parents waiting for their children (sorted set, scored by its flow deadline, 2^53 − 1 without one).
pub const WAITING: &[u8] = b"waiting";
/// Entries to apply in another queue (sorted set, scored by when they may be leased).
pub const OUTBOX: &[u8] = b"outbox";
/// The queue's history and latency histograms (hash: per-minute counts, bucket counters).
pub const METRICS: &[u8] = b"metrics";
/// A lane's ready list at a priority is this prefix, the priority, `:`, the lane name.
pub const READY: &[u8] = b"ready:";
/// A lane's priority levels (a sorted set) are this prefix followed by the lane name.
pub const LEVELS: &[u8] = b"levels:";
/// A lane's state (a hash) is this prefix followed by the lane name.
pub const LANE: &[u8] = b"lane:";
/// The longest name inside a queue (a lane, a scheduler), in bytes.
pub const MAX_NAME_BYTES: usize = 1024;

/// Whether `name` is a valid queue name for the host grammar: any bytes except `{`, `}` and NUL.
/// The empty name is valid here; the module additionally refuses it (see [`Queue::new`]).
/// The host twin (`validQueue`) checks `}`, `{`, NUL, then that the string is well-formed UTF-16;
/// that last rule has no twin here: bytes cannot hold a lone surrogate (a client sends U+FFFD).
pub fn valid_queue(name: &[u8]) -> bool {
    !name.iter().any(|&b| b == b'{' || b == b'}' || b == 0)
}

/// Whether `name` is a legal name inside a queue (a lane, a scheduler): non-empty (the empty name is the
/// default lane), at most [`MAX_NAME_BYTES`], and a [`valid_queue`] name. The host twin
/// (`validName`) checks, in order: empty, `}`, `{`, NUL, well-formed UTF-16 (host only), length.
pub fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && valid_queue(name) && name.len() <= MAX_NAME_BYTES
}

/// Splits `emq:{<q>}:<type>` into `(q, type)`: the `emq:{` literal, the name up to the first `}`,
/// then `}:`, and the rest as the type (possibly empty: the base). `None` when the key does not
/// have that shape or the name is not [`valid_queue`] (the empty name splits).
pub fn split_queue_key(key: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = key.strip_prefix(PREFIX)?;
    let close = rest.iter().position(|&b| b == b'}')?;
    let name = &rest[..close];
    let ty = rest[close..].strip_prefix(CLOSE)?;
    if !valid_queue(name) {
        return None;
    }
    Some((name, ty))
}

/// One queue, known by a valid non-empty name; builds every key of that queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queue<'a> {
    name: &'a [u8],
}

impl<'a> Queue<'a> {
    /// A queue from its name: `None` unless the name is valid and non-empty (an empty `{}` carries
    /// no hashtag and would spread one queue over many slots). The host twin of the client's check
    /// is `assertClientQueue` (rule `queue-empty`), in the same order: empty first, then the bytes.
    pub fn new(name: &'a [u8]) -> Option<Self> {
        if name.is_empty() || !valid_queue(name) {
            return None;
        }
        Some(Queue { name })
    }

    /// Recovers the queue from a key whose type must be exactly `ty` (byte for byte; `job:<id>`
    /// for a row, the empty type for the base). `None` when the key does not split, the type
    /// differs, or the name is empty.
    pub fn from_key(key: &'a [u8], ty: &[u8]) -> Option<Self> {
        let (name, found) = split_queue_key(key)?;
        if found != ty {
            return None;
        }
        Queue::new(name)
    }

    /// The queue name.
    pub fn name(&self) -> &'a [u8] {
        self.name
    }

    /// Whether `key` is exactly this queue's key of type `ty`, without building it.
    pub fn is_key(&self, key: &[u8], ty: &[u8]) -> bool {
        let n = self.name.len();
        key.len() == PREFIX.len() + n + CLOSE.len() + ty.len()
            && key.starts_with(PREFIX)
            && &key[PREFIX.len()..PREFIX.len() + n] == self.name
            && &key[PREFIX.len() + n..PREFIX.len() + n + CLOSE.len()] == CLOSE
            && &key[PREFIX.len() + n + CLOSE.len()..] == ty
    }

    /// Whether `key` is exactly the row of `id` in this queue.
    pub fn is_job_key(&self, key: &[u8], id: &[u8]) -> bool {
        let base = PREFIX.len() + self.name.len() + CLOSE.len();
        key.len() == base + JOB.len() + id.len()
            && self.is_key(&key[..base], b"")
            && &key[base..base + JOB.len()] == JOB
            && &key[base + JOB.len()..] == id
    }

    /// The key of type `ty`: `emq:{q}:` + `ty`.
    pub fn key(&self, ty: &[u8]) -> Vec<u8> {
        let mut k = Vec::with_capacity(PREFIX.len() + self.name.len() + CLOSE.len() + ty.len());
        k.extend_from_slice(PREFIX);
        k.extend_from_slice(self.name);
        k.extend_from_slice(CLOSE);
        k.extend_from_slice(ty);
        k
    }

    /// The base `emq:{q}:`: never a key itself; rows are base + `job:` + id.
    pub fn base(&self) -> Vec<u8> {
        self.key(b"")
    }

    /// The row of one job: `emq:{q}:job:<id>` (the id is not checked here).
    pub fn job(&self, id: &[u8]) -> Vec<u8> {
        let mut k = self.key(JOB);
        k.extend_from_slice(id);
        k
    }

    /// `emq:{q}:meta`.
    pub fn meta(&self) -> Vec<u8> {
        self.key(META)
    }

    /// `emq:{q}:pending`.
    pub fn pending(&self) -> Vec<u8> {
        self.key(PENDING)
    }

    /// `emq:{q}:active`.
    pub fn active(&self) -> Vec<u8> {
        self.key(ACTIVE)
    }

    /// `emq:{q}:schedule`.
    pub fn schedule(&self) -> Vec<u8> {
        self.key(SCHEDULE)
    }

    /// `emq:{q}:dead`.
    pub fn dead(&self) -> Vec<u8> {
        self.key(DEAD)
    }

    /// `emq:{q}:wake`.
    pub fn wake(&self) -> Vec<u8> {
        self.key(WAKE)
    }

    /// The ready list of `lane` at `priority`: `ready:<p>:<lane>`, except the default lane (the
    /// empty name) at priority 0, whose list is `pending` (the host twin: `Keyspace.ready`).
    pub fn ready(&self, lane: &[u8], priority: u64) -> Vec<u8> {
        if lane.is_empty() && priority == 0 {
            return self.key(PENDING);
        }
        let mut k = self.key(READY);
        k.extend_from_slice(priority.to_string().as_bytes());
        k.push(b':');
        k.extend_from_slice(lane);
        k
    }

    /// `levels:<lane>`: the priorities ≥ 1 whose ready list of `lane` is non-empty.
    pub fn levels(&self, lane: &[u8]) -> Vec<u8> {
        let mut k = self.key(LEVELS);
        k.extend_from_slice(lane);
        k
    }

    /// `lane:<lane>`: the state of `lane`.
    pub fn lane(&self, lane: &[u8]) -> Vec<u8> {
        let mut k = self.key(LANE);
        k.extend_from_slice(lane);
        k
    }

    /// `scheduler:<name>`: one scheduler's hash (the name is checked by the gate, not here).
    pub fn scheduler(&self, name: &[u8]) -> Vec<u8> {
        let mut k = self.key(SCHEDULER);
        k.extend_from_slice(name);
        k
    }
}

/// The row key of `id` under a base key `emq:{q}:` (used when ids come out of a list or set).
pub fn row_of(base: &[u8], id: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(base.len() + JOB.len() + id.len());
    k.extend_from_slice(base);
    k.extend_from_slice(JOB);
    k.extend_from_slice(id);
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn s(v: &Value) -> Option<&[u8]> {
        v.as_str().map(str::as_bytes)
    }

    /// Four hex digits at the start of `b`, if there are.
    fn hex4(b: &[u8]) -> Option<u32> {
        let digits = std::str::from_utf8(b.get(..4)?).ok()?;
        u32::from_str_radix(digits, 16).ok()
    }

    /// JSON text with every lone-surrogate escape (`\ud800`, not half of an escaped pair) replaced
    /// by `\ufffd`, and how many were. serde_json refuses such an escape in a string, and no byte
    /// string holds a lone surrogate: the vectors that have one are marked `hostOnly` (a host
    /// string the client would send as U+FFFD, which the host refuses to build) and skipped.
    fn without_lone_surrogates(text: &str) -> (String, usize) {
        let b = text.as_bytes();
        let (mut out, mut from, mut i, mut replaced) = (String::with_capacity(text.len()), 0, 0, 0);
        while i < b.len() {
            if b[i] != b'\\' {
                i += 1;
                continue;
            }
            if b.get(i + 1) != Some(&b'u') {
                i += 2; // a one-byte escape, `\\` included
                continue;
            }
            let n = hex4(&b[i + 2..]).expect("\\u and four hex digits");
            let low_next = b.get(i + 6..i + 8) == Some(&b"\\u"[..])
                && hex4(&b[i + 8..]).is_some_and(|m| (0xDC00..=0xDFFF).contains(&m));
            if (0xD800..=0xDBFF).contains(&n) && low_next {
                i += 12; // an escaped pair: one astral character
                continue;
            }
            if (0xD800..=0xDFFF).contains(&n) {
                out.push_str(&text[from..i]);
                out.push_str("\\ufffd");
                replaced += 1;
                from = i + 6;
            }
            i += 6;
        }
        out.push_str(&text[from..]);
        (out, replaced)
    }

    /// The shared vectors and how many lone-surrogate escapes they held.
    fn load_vectors() -> (Value, usize) {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/keys.json");
        let text = std::fs::read_to_string(path).expect("tests/vectors/keys.json is readable");
        let (text, replaced) = without_lone_surrogates(&text);
        let vectors = serde_json::from_str(&text).expect("tests/vectors/keys.json is JSON");
        (vectors, replaced)
    }

    #[test]
    fn lone_surrogate_escapes() {
        let (out, n) = without_lone_surrogates(
            r#"["a\ud800b", "\udfff", "\ud83d\ude80", "\\ud800", "\ude80\ud83d", "\ud800\u0041"]"#,
        );
        assert_eq!(
            out,
            r#"["a\ufffdb", "\ufffd", "\ud83d\ude80", "\\ud800", "\ufffd\ufffd", "\ufffd\u0041"]"#
        );
        assert_eq!(n, 5);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v[2], "\u{1F680}");
        assert_eq!(v[3], "\\ud800");
    }

    #[test]
    fn shared_vectors_agree() {
        let (vectors, replaced) = load_vectors();
        let cases = vectors["cases"].as_array().expect("cases array");
        assert!(
            cases.len() >= 20,
            "suspiciously few vectors: {}",
            cases.len()
        );
        let mut host_only = 0;
        for case in cases {
            let note = case["note"].as_str().unwrap_or("?");
            // A lone surrogate never reaches the module: the host refuses the name, and a client
            // would send U+FFFD in its place (tests/keyspace/vectors.test.ts checks these rows and
            // that the flag marks exactly them).
            if case["hostOnly"].as_bool() == Some(true) {
                host_only += 1;
                continue;
            }
            let key = s(&case["key"]).expect("key");

            let split = split_queue_key(key);
            let want_split = match &case["split"] {
                Value::Null => None,
                v => Some((s(&v["queue"]).unwrap(), s(&v["type"]).unwrap())),
            };
            assert_eq!(split, want_split, "split_queue_key: {note}");

            let ty = s(&case["fromKey"]["type"]).expect("fromKey.type");
            let got = Queue::from_key(key, ty).map(|q| q.name());
            assert_eq!(got, s(&case["fromKey"]["queue"]), "Queue::from_key: {note}");

            if let Some(queue) = s(&case["queue"]) {
                let native_valid = case["nativeValid"].as_bool().expect("nativeValid");
                assert_eq!(
                    valid_queue(queue) && !queue.is_empty(),
                    native_valid,
                    "valid_queue: {note}"
                );
                assert_eq!(
                    Queue::new(queue).is_some(),
                    native_valid,
                    "Queue::new: {note}"
                );
                assert_eq!(
                    valid_queue(queue),
                    case["valid"].as_bool().unwrap(),
                    "valid: {note}"
                );
                if native_valid {
                    let q = Queue::new(queue).unwrap();
                    let t = s(&case["type"]).expect("type");
                    let built = match t {
                        b"pending" => q.pending(),
                        b"active" => q.active(),
                        b"schedule" => q.schedule(),
                        b"dead" => q.dead(),
                        b"meta" => q.meta(),
                        b"wake" => q.wake(),
                        b"ring" | b"lanes" | b"parked" | b"schedulers" | b"dedup"
                        | b"dedup_ttl" | b"completed" | b"events" | b"waiting" | b"outbox"
                        | b"metrics" => q.key(t),
                        _ if t.starts_with(SCHEDULER) => q.scheduler(&t[SCHEDULER.len()..]),
                        _ if t.starts_with(READY)
                            || t.starts_with(LANE)
                            || t.starts_with(LEVELS) =>
                        {
                            q.key(t)
                        }
                        _ => {
                            let id = t.strip_prefix(JOB).expect("job:<id> type");
                            assert!(q.is_job_key(key, id), "is_job_key: {note}");
                            q.job(id)
                        }
                    };
                    assert_eq!(built, key, "builder: {note}");
                    assert!(q.is_key(key, t), "is_key: {note}");
                }
            }
        }
        // Every host-only row held at least one lone surrogate, and there are such rows.
        assert!(host_only >= 5, "host-only rows: {host_only}");
        assert!(
            replaced >= host_only,
            "{replaced} escapes for {host_only} host-only rows"
        );
    }

    #[test]
    fn builders() {
        let q = Queue::new(b"orders").unwrap();
        assert_eq!(q.base(), b"emq:{orders}:");
        assert_eq!(q.job(b"JOB0Nb1VTbfnu4"), b"emq:{orders}:job:JOB0Nb1VTbfnu4");
        assert_eq!(row_of(&q.base(), b"JOBx"), b"emq:{orders}:job:JOBx");
        assert!(q.is_key(b"emq:{orders}:", b""));
        assert!(!q.is_key(b"emq:{orders}:pending", b"active"));
        assert!(!q.is_key(b"emq:{order}:pending", b"pending"));
        assert!(!q.is_job_key(b"emq:{orders}:job:JOBx", b"JOBy"));
        assert!(!q.is_job_key(b"emq:{orders}:jobs:JOBx", b"JOBx"));
        // Right length, one part wrong: each `&&` of is_key matters (cargo mutants: `&&` → `||`).
        assert!(q.is_key(b"emq:{orders}:pending", b"pending"));
        assert!(!q.is_key(b"EMQ:{orders}:pending", b"pending")); // prefix
        assert!(!q.is_key(b"emq:{ordexs}:pending", b"pending")); // name
        assert!(!q.is_key(b"emq:{orders]:pending", b"pending")); // `}:`
        assert!(!q.is_key(b"emq:{orders};pending", b"pending")); // `}:`, the colon
        assert!(!q.is_key(b"emq:{orders}:pendinx", b"pending")); // type
    }

    /// The shared lane vectors: `valid_name` agrees with the host on every name both can hold,
    /// and a lane's keys are built byte for byte as the host builds them.
    #[test]
    fn lane_vectors_agree() {
        let (vectors, _) = load_vectors();
        let names = vectors["names"].as_array().expect("names");
        assert!(names.len() >= 12);
        for n in names {
            if n["hostOnly"].as_bool() == Some(true) {
                continue;
            }
            let name = n["name"].as_str().unwrap().as_bytes();
            assert_eq!(
                valid_name(name),
                n["valid"].as_bool().unwrap(),
                "{}",
                n["note"]
            );
        }
        for c in vectors["laneKeys"].as_array().expect("laneKeys") {
            let q = Queue::new(c["queue"].as_str().unwrap().as_bytes()).unwrap();
            let lane = c["lane"].as_str().unwrap().as_bytes();
            let p = c["priority"].as_u64().unwrap();
            assert_eq!(q.ready(lane, p), c["ready"].as_str().unwrap().as_bytes());
            assert_eq!(q.levels(lane), c["levels"].as_str().unwrap().as_bytes());
            assert_eq!(q.lane(lane), c["state"].as_str().unwrap().as_bytes());
        }
    }

    #[test]
    fn names() {
        assert!(valid_queue(b""));
        assert!(Queue::new(b"").is_none());
        assert!(!valid_queue(b"a}b"));
        assert!(!valid_queue(b"a\0b"));
        assert!(valid_queue(b"a:b"));
        assert_eq!(
            split_queue_key(b"emq:{}:pending"),
            Some((&b""[..], &b"pending"[..]))
        );
        assert_eq!(split_queue_key(b"emq:{a}b}:pending"), None);
        assert_eq!(Queue::from_key(b"emq:{}:pending", b"pending"), None);
        assert_eq!(
            Queue::from_key(b"emq:{q}:", b"").map(|q| q.name()),
            Some(&b"q"[..])
        );
    }
}
