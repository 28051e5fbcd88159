//! The module's keyspace check as a tiny C ABI for WebAssembly (`wasm32-unknown-unknown`), so the
//! `emq ui` key panel runs the module's own Rust next to the host's TypeScript. The keyspace is
//! `native/src/keyspace.rs` itself, included by path: the same bytes the module is built from.
//!
//! ABI (all integers are wasm32 `u32`/`usize`):
//! - `emq_alloc(len) -> ptr` / `emq_free(ptr, len)`: buffers in the module's memory.
//! - `emq_verdict(key, key_len, ty, ty_len, out) -> accepted`: runs `split_queue_key(key)` and
//!   `Queue::from_key(key, ty)` and writes [`VERDICT_WORDS`] words at `out` (see [`Verdict`]).
//!   Offsets of the queue name and type are into the key bytes, which `split_queue_key` slices.

#[allow(dead_code)] // the module's builders are not needed here: only the split and the check
#[path = "../../src/keyspace.rs"]
mod keyspace;

use keyspace::{split_queue_key, Queue};

/// Why a key is refused: the number in word 6 of a [`Verdict`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// `Queue::from_key` accepts.
    Accepted = 0,
    /// `split_queue_key` finds no `emq:{<q>}:<type>` with a valid name.
    NoSplit = 1,
    /// The key splits, but its type is not the expected one.
    OtherType = 2,
    /// The key splits with the expected type, but the name is empty.
    EmptyName = 3,
}

impl Reason {
    /// The verdict in words, as `emq key` (lib/cli/key.ts) prints it.
    pub fn text(self) -> &'static str {
        match self {
            Reason::Accepted => "",
            Reason::NoSplit | Reason::OtherType => {
                "the key does not split back into this queue and type (the key layout)"
            }
            Reason::EmptyName => {
                "the module refuses the empty name: an empty {} carries no hashtag"
            }
        }
    }
}

/// The words `emq_verdict` writes, in order.
pub const VERDICT_WORDS: usize = 9;

/// What `emq_verdict` writes at `out`, word by word.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// 1 when `split_queue_key` splits the key.
    pub split: u32,
    /// Offset of the split's queue name in the key.
    pub queue_off: u32,
    /// Length of the split's queue name.
    pub queue_len: u32,
    /// Offset of the split's type in the key.
    pub type_off: u32,
    /// Length of the split's type.
    pub type_len: u32,
    /// 1 when `Queue::from_key(key, ty)` accepts.
    pub accepted: u32,
    /// The [`Reason`].
    pub reason: u32,
    /// Address of the reason's text (UTF-8, static).
    pub reason_ptr: u32,
    /// Length of the reason's text.
    pub reason_len: u32,
}

/// The verdict on `key` for the expected type `ty`: pure, no memory of the caller's.
pub fn verdict(key: &[u8], ty: &[u8]) -> Verdict {
    let offset = |part: &[u8]| (part.as_ptr() as usize - key.as_ptr() as usize) as u32;
    let split = split_queue_key(key);
    let accepted = Queue::from_key(key, ty).is_some();
    let reason = match split {
        _ if accepted => Reason::Accepted,
        None => Reason::NoSplit,
        Some((_, found)) if found != ty => Reason::OtherType,
        Some(_) => Reason::EmptyName,
    };
    let (queue_off, queue_len, type_off, type_len) = match split {
        Some((q, t)) => (offset(q), q.len() as u32, offset(t), t.len() as u32),
        None => (0, 0, 0, 0),
    };
    let text = reason.text();
    Verdict {
        split: split.is_some() as u32,
        queue_off,
        queue_len,
        type_off,
        type_len,
        accepted: accepted as u32,
        reason: reason as u32,
        reason_ptr: text.as_ptr() as usize as u32,
        reason_len: text.len() as u32,
    }
}

/// A buffer of `len` bytes in this module's memory, for the caller to fill; free with [`emq_free`].
#[no_mangle]
pub extern "C" fn emq_alloc(len: usize) -> *mut u8 {
    let mut buf = Vec::<u8>::with_capacity(len.max(1));
    let ptr = buf.as_mut_ptr();
    std::mem::forget(buf);
    ptr
}

/// Frees a buffer from [`emq_alloc`] of the same `len`.
///
/// # Safety
/// `ptr` must come from `emq_alloc(len)` and not be freed twice.
#[no_mangle]
pub unsafe extern "C" fn emq_free(ptr: *mut u8, len: usize) {
    drop(Vec::from_raw_parts(ptr, 0, len.max(1)));
}

/// Runs [`verdict`] on the `key_len` bytes at `key` and the `ty_len` bytes at `ty`, writes the
/// [`Verdict`] at `out` ([`VERDICT_WORDS`] little-endian words, no alignment needed) and returns 1
/// when `Queue::from_key` accepts.
///
/// # Safety
/// `key` and `ty` must point to that many readable bytes, `out` to `4 * VERDICT_WORDS` writable ones.
#[no_mangle]
pub unsafe extern "C" fn emq_verdict(
    key: *const u8,
    key_len: usize,
    ty: *const u8,
    ty_len: usize,
    out: *mut u8,
) -> u32 {
    let key = std::slice::from_raw_parts(key, key_len);
    let ty = std::slice::from_raw_parts(ty, ty_len);
    let v = verdict(key, ty);
    let words = [
        v.split,
        v.queue_off,
        v.queue_len,
        v.type_off,
        v.type_len,
        v.accepted,
        v.reason,
        v.reason_ptr,
        v.reason_len,
    ];
    let out = std::slice::from_raw_parts_mut(out, 4 * VERDICT_WORDS);
    for (chunk, word) in out.chunks_exact_mut(4).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    v.accepted
}
