//! A client blocked on a key: what it runs when the key is signalled ready or its time runs out is
//! handed over as closures ([`Ctx::block_on_key`]) and kept in the blocked client's private data,
//! so this file knows nothing of the verbs it serves.

use std::ffi::{c_int, c_long, c_void};

use valkey_module::raw;

use super::{Ctx, Str};

/// What a blocked client runs when its key is signalled, with the blocked call's argv: whether it
/// was served (it replied, and unblocks; else it keeps waiting).
type Ready = dyn for<'c> Fn(Ctx<'c>, &'c [Str<'c>]) -> bool;

/// What a blocked client runs when its time ran out (it replies).
type TimedOut = dyn for<'c> Fn(Ctx<'c>);

/// A blocked client's private data: its two callbacks.
struct Waiting {
    ready: Box<Ready>,
    timed_out: Box<TimedOut>,
}

impl Ctx<'_> {
    /// Blocks the client on `key` for at most `timeout_ms`: when the key is signalled ready,
    /// `ready` runs with the blocked call's argv and says whether it served the client (else the
    /// client keeps waiting); on timeout `timed_out` replies. Served also while the key is missing
    /// (`UNBLOCK_DELETED`): a SCHEDULE or RETRY signals an empty pending, so that a due time
    /// earlier than the wait's end answers the claim early.
    pub fn block_on_key<R, T>(self, key: Str, timeout_ms: i64, ready: R, timed_out: T)
    where
        R: for<'c> Fn(Ctx<'c>, &'c [Str<'c>]) -> bool + 'static,
        T: for<'c> Fn(Ctx<'c>) + 'static,
    {
        let mut keys = [key.raw];
        let waiting = Waiting {
            ready: Box::new(ready),
            timed_out: Box::new(timed_out),
        };
        let privdata = Box::into_raw(Box::new(waiting)).cast::<c_void>();
        // SAFETY: a valid ctx of a command that may block; the server keeps its own reference to
        // the key name; privdata is freed by `free_waiting`.
        unsafe {
            api!(RedisModule_BlockClientOnKeysWithFlags)(
                self.raw,
                Some(blocked_ready),
                Some(blocked_timeout),
                Some(free_waiting),
                timeout_ms as c_long as _,
                keys.as_mut_ptr(),
                1,
                privdata,
                raw::REDISMODULE_BLOCK_UNBLOCK_DELETED as c_int,
            );
        }
    }

    /// Wakes the clients blocked on `key` (they re-run their claim).
    pub fn signal_ready(self, key: Str) {
        // SAFETY: a valid ctx and a live key name.
        unsafe { api!(RedisModule_SignalKeyAsReady)(self.raw, key.raw) };
    }
}

/// A blocked client's key was signalled ready: its `ready` runs; it is unblocked when served.
extern "C" fn blocked_ready(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    // SAFETY: the server passes the blocked call's argv and the privdata set by `block_on_key`.
    let (ctx, argv, waiting) = unsafe { callback_args(ctx, argv, argc) };
    if waiting.is_some_and(|w| (w.ready)(ctx, argv)) {
        raw::Status::Ok as c_int
    } else {
        raw::Status::Err as c_int
    }
}

/// A blocked client's time ran out: its `timed_out` replies.
extern "C" fn blocked_timeout(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    // SAFETY: as in `blocked_ready`.
    let (ctx, _, waiting) = unsafe { callback_args(ctx, argv, argc) };
    if let Some(w) = waiting {
        (w.timed_out)(ctx);
    }
    raw::Status::Ok as c_int
}

extern "C" fn free_waiting(_ctx: *mut raw::RedisModuleCtx, privdata: *mut c_void) {
    if !privdata.is_null() {
        // SAFETY: made by Box::into_raw in `block_on_key`, freed once by the server's call here.
        drop(unsafe { Box::from_raw(privdata.cast::<Waiting>()) });
    }
}

/// The context, argv and closures of a blocked client's callback.
///
/// # Safety
/// `ctx` must be a callback context of a client blocked by [`Ctx::block_on_key`], with its argv.
unsafe fn callback_args<'a>(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> (Ctx<'a>, &'a [Str<'a>], Option<&'a Waiting>) {
    // SAFETY: a callback context of a blocked client, whose private data `block_on_key` set to a
    // `Waiting` (freed only after its last callback); its argv is the blocked call's.
    unsafe {
        let privdata = api!(RedisModule_GetBlockedClientPrivateData)(ctx).cast::<Waiting>();
        let (ctx, argv) = Ctx::from_raw(ctx, argv, argc);
        (ctx, argv, privdata.as_ref())
    }
}
