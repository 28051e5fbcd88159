//! Module strings: borrowed ([`Str`]: argv, literals), created or handed over ([`Owned`], freed on
//! drop), and the literals made once at load and never freed ([`Literal`]).

use std::ffi::c_char;
use std::marker::PhantomData;
use std::ptr;

use valkey_module::raw;

use super::Ctx;

/// A module string this code does not own: an argv entry (valid for the call) or a literal
/// (valid forever).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Str<'a> {
    pub(super) raw: *mut raw::RedisModuleString,
    pub(super) _owner: PhantomData<&'a ()>,
}

impl<'a> Str<'a> {
    /// The bytes; they live as long as the string.
    pub fn bytes(self) -> &'a [u8] {
        let mut len = 0usize;
        // SAFETY: `raw` is a live module string for 'a (argv of the call, a literal, or an Owned
        // the borrow checker keeps alive).
        let p = unsafe { api!(RedisModule_StringPtrLen)(self.raw, &mut len) };
        if p.is_null() || len == 0 {
            return &[];
        }
        // SAFETY: the server guarantees `len` readable bytes at `p` while the string lives.
        unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
    }
}

/// A module string this code created or was handed by the server (a pop, a hash field); freed on
/// drop. Borrow it as a [`Str`] with [`Owned::as_str`].
pub struct Owned<'a> {
    ctx: Ctx<'a>,
    pub(super) raw: *mut raw::RedisModuleString,
}

impl<'a> Owned<'a> {
    pub(super) fn adopt(ctx: Ctx<'a>, raw: *mut raw::RedisModuleString) -> Option<Owned<'a>> {
        (!raw.is_null()).then(|| Owned { ctx, raw })
    }

    /// The string, borrowed for as long as this value lives.
    pub fn as_str(&self) -> Str<'_> {
        Str {
            raw: self.raw,
            _owner: PhantomData,
        }
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        self.as_str().bytes()
    }
}

impl Drop for Owned<'_> {
    fn drop(&mut self) {
        // SAFETY: created by CreateString* or handed over by the server, freed exactly once.
        unsafe { api!(RedisModule_FreeString)(self.ctx.raw, self.raw) };
    }
}

impl<'a> Ctx<'a> {
    /// A new module string with these bytes.
    pub fn string(self, b: &[u8]) -> Owned<'a> {
        // SAFETY: a valid ctx; the server copies the bytes.
        let raw = unsafe {
            api!(RedisModule_CreateString)(self.raw, b.as_ptr().cast::<c_char>(), b.len())
        };
        Owned { ctx: self, raw }
    }

    /// The decimal string of `n`.
    pub fn int(self, n: i64) -> Owned<'a> {
        // SAFETY: a valid ctx.
        let raw = unsafe { api!(RedisModule_CreateStringFromLongLong)(self.raw, n) };
        Owned { ctx: self, raw }
    }

    /// The decimals of two numbers joined by `sep` (a rate state `<q> <r>`, a stream id
    /// `<ms>-<seq>`), made on the stack: `format!` costs a claim about a thousand instructions.
    pub fn pair(self, a: i128, sep: u8, b: i128) -> Owned<'a> {
        let mut buf = [0u8; 84];
        let mut at = decimal(a, &mut buf, 0);
        buf[at] = sep;
        at = decimal(b, &mut buf, at + 1);
        self.string(&buf[..at])
    }
}

/// Writes the decimal of `n` into `buf` at `at` (room for 41 bytes); returns where it ends.
fn decimal(n: i128, buf: &mut [u8], mut at: usize) -> usize {
    let mut digits = [0u8; 40];
    let (mut i, mut u) = (digits.len(), n.unsigned_abs());
    loop {
        i -= 1;
        digits[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if n < 0 {
        buf[at] = b'-';
        at += 1;
    }
    let len = digits.len() - i;
    buf[at..at + len].copy_from_slice(&digits[i..]);
    at + len
}

#[cfg(test)]
mod tests {
    use super::decimal;

    #[test]
    fn decimals_as_format_writes_them() {
        for n in [
            0i128,
            7,
            -7,
            10,
            1_700_000_000_000,
            i64::MIN as i128,
            u64::MAX as i128,
        ] {
            let mut buf = [0u8; 41];
            let end = decimal(n, &mut buf, 0);
            assert_eq!(&buf[..end], n.to_string().as_bytes());
        }
    }
}

/// A module string made once and never changed or freed, so that every call may share it: the
/// module's literals (`crate::literals`), made at load.
#[derive(Clone, Copy)]
pub struct Literal {
    raw: *mut raw::RedisModuleString,
}

// SAFETY: a literal is immutable after it is made and never freed; the server runs commands, and
// so every use of one, on its main thread.
unsafe impl Sync for Literal {}
// SAFETY: as above.
unsafe impl Send for Literal {}

impl Literal {
    /// A literal of these bytes.
    pub fn new(b: &[u8]) -> Literal {
        // SAFETY: a string with no context is never freed automatically; it lives for the process.
        let raw = unsafe {
            api!(RedisModule_CreateString)(ptr::null_mut(), b.as_ptr().cast::<c_char>(), b.len())
        };
        Literal { raw }
    }

    /// The literal, as a string any call may pass.
    pub fn str(self) -> Str<'static> {
        Str {
            raw: self.raw,
            _owner: PhantomData,
        }
    }
}
