//! One command call: its context ([`Ctx`]) and what it asks of the server besides keys — its flags,
//! the cluster probe, effect replication, the getkeys callback, replies — and the server's clock.

use std::ffi::{c_char, c_int, c_long, CStr};
use std::marker::PhantomData;

use valkey_module::raw;

use super::Str;

/// The context of one command call; everything borrowed from it lives at most as long (`'a`).
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub(super) raw: *mut raw::RedisModuleCtx,
    _call: PhantomData<&'a ()>,
}

impl<'a> Ctx<'a> {
    /// The context and argv the server passes a command or a blocked client's callback.
    ///
    /// # Safety
    /// `ctx` must be the server's context of a call running now, and `argv` its `argc` live strings.
    pub(super) unsafe fn from_raw(
        ctx: *mut raw::RedisModuleCtx,
        argv: *mut *mut raw::RedisModuleString,
        argc: c_int,
    ) -> (Ctx<'a>, &'a [Str<'a>]) {
        let argv: &[Str] = if argv.is_null() || argc <= 0 {
            &[]
        } else {
            // SAFETY: the caller's `argc` live strings; `Str` is a transparent pointer, and the
            // slice does not outlive the call (it borrows 'a).
            unsafe { std::slice::from_raw_parts(argv.cast::<Str>(), argc as usize) }
        };
        (
            Ctx {
                raw: ctx,
                _call: PhantomData,
            },
            argv,
        )
    }

    /// Whether the server runs in cluster mode.
    pub fn cluster_mode(self) -> bool {
        // SAFETY: a valid ctx.
        let flags = unsafe { api!(RedisModule_GetContextFlags)(self.raw) } as u32;
        flags & raw::REDISMODULE_CTX_FLAGS_CLUSTER != 0
    }

    /// Whether this call may block (not inside MULTI, a script, or a blocked client's callback).
    pub fn may_block(self) -> bool {
        // SAFETY: a valid ctx.
        let flags = unsafe { api!(RedisModule_GetContextFlags)(self.raw) } as u32;
        flags & raw::REDISMODULE_CTX_FLAGS_DENY_BLOCKING == 0
    }

    /// Cluster: whether `meta` and `keys` can be served here together — a dry run of
    /// `EXISTS meta keys…` through the server's own routing check, which refuses exactly when the
    /// slot is being migrated and a key is missing here (it may be on the other node). A refusal
    /// is an error reply; a dry run that passes answers no reply (Valkey 8.0) or a reply of
    /// unknown type (9.x), which is not a refusal.
    pub fn all_local(self, meta: Str, keys: &[Str]) -> bool {
        let mut argv: Vec<*mut raw::RedisModuleString> = Vec::with_capacity(1 + keys.len());
        argv.push(meta.raw);
        argv.extend(keys.iter().map(|k| k.raw));
        // SAFETY: a valid ctx; `v` takes an array of live strings and its length; `D` returns
        // before running the command, `E` turns refusals into an error reply, freed here.
        unsafe {
            let reply = api!(RedisModule_Call)(
                self.raw,
                c"EXISTS".as_ptr(),
                c"DEv".as_ptr(),
                argv.as_mut_ptr(),
                argv.len(),
            );
            if reply.is_null() {
                return true;
            }
            let refused =
                api!(RedisModule_CallReplyType)(reply) == raw::REDISMODULE_REPLY_ERROR as c_int;
            api!(RedisModule_FreeCallReply)(reply);
            !refused
        }
    }

    /// Replicates one effect command to replicas and the AOF (the server wraps a call's effects in
    /// MULTI/EXEC).
    pub fn replicate(self, command: &CStr, args: &[Str]) {
        // SAFETY: `Str` is a transparent pointer, so `args` is an array of live module strings.
        unsafe {
            api!(RedisModule_Replicate)(
                self.raw,
                command.as_ptr(),
                c"v".as_ptr(),
                args.as_ptr().cast::<*mut raw::RedisModuleString>(),
                args.len(),
            );
        }
    }

    /// Whether this invocation only asks for the key positions (the getkeys callback).
    pub fn keys_request(self) -> bool {
        // SAFETY: a valid ctx.
        unsafe { api!(RedisModule_IsKeysPositionRequest)(self.raw) != 0 }
    }

    /// Declares argv position `pos` as a key (getkeys callback).
    pub fn key_at(self, pos: usize) {
        // SAFETY: a valid ctx in a keys-position request.
        unsafe { api!(RedisModule_KeyAtPos)(self.raw, pos as c_int) };
    }

    /// Replies with an integer.
    pub fn reply_int(self, n: i64) {
        // SAFETY: a valid ctx.
        unsafe { api!(RedisModule_ReplyWithLongLong)(self.raw, n) };
    }

    /// Replies with nil.
    pub fn reply_nil(self) {
        // SAFETY: a valid ctx.
        unsafe { api!(RedisModule_ReplyWithNull)(self.raw) };
    }

    /// Starts an array reply of `n` elements.
    pub fn reply_array(self, n: usize) {
        // SAFETY: a valid ctx.
        unsafe { api!(RedisModule_ReplyWithArray)(self.raw, n as c_long) };
    }

    /// Replies with a bulk string.
    pub fn reply_str(self, s: Str) {
        // SAFETY: a valid ctx and a live string.
        unsafe { api!(RedisModule_ReplyWithString)(self.raw, s.raw) };
    }

    /// Replies with a bulk string of these bytes (the server copies them).
    pub fn reply_bytes(self, b: &[u8]) {
        // SAFETY: a valid ctx and a live buffer of b.len() bytes.
        unsafe {
            api!(RedisModule_ReplyWithStringBuffer)(self.raw, b.as_ptr().cast::<c_char>(), b.len())
        };
    }

    /// Replies with an error; `text` starts with its code (`ERR`, `WRONGTYPE`). NUL becomes a space.
    pub fn reply_error(self, text: &[u8]) {
        let mut z = Vec::with_capacity(text.len() + 1);
        z.extend(text.iter().map(|&b| if b == 0 { b' ' } else { b }));
        z.push(0);
        // SAFETY: a valid ctx and a NUL-terminated buffer the server copies.
        unsafe { api!(RedisModule_ReplyWithError)(self.raw, z.as_ptr().cast::<c_char>()) };
    }
}

/// The server's clock in ms since the epoch.
pub fn now_ms() -> i64 {
    // SAFETY: no arguments; callable from any command.
    unsafe { api!(RedisModule_Milliseconds)() }
}
