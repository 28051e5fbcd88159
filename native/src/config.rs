//! The module's configuration values (`emq.wire`, `emq.max-payload`), registered in `lib.rs`.

use std::sync::atomic::{AtomicI64, Ordering};

use crate::spec;

/// Default of `emq.wire`: the wire this module speaks.
pub const WIRE_DEFAULT: i64 = spec::WIRE;
/// Default of `emq.max-payload`: the spec's payload limit (the scripts' limit), 1 MiB.
pub const MAX_PAYLOAD_DEFAULT: i64 = spec::MAX_PAYLOAD_BYTES;

/// `emq.wire`: the wire identity of this node; any value but the wire's fences every verb.
pub static WIRE: AtomicI64 = AtomicI64::new(WIRE_DEFAULT);
/// `emq.max-payload`: the longest payload ENQUEUE and SCHEDULE accept, in bytes.
pub static MAX_PAYLOAD: AtomicI64 = AtomicI64::new(MAX_PAYLOAD_DEFAULT);

/// The current `emq.wire`.
pub fn wire() -> i64 {
    WIRE.load(Ordering::Relaxed)
}

/// The current `emq.max-payload`.
pub fn max_payload() -> i64 {
    MAX_PAYLOAD.load(Ordering::Relaxed)
}
