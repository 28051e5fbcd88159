//! The one door to the server's C API: every `unsafe` block of the module is in this file. What
//! leaves it is safe and lifetime-bound — a [`Ctx`] lives for one call, argv strings ([`Str`]) and
//! open keys ([`Key`]) borrow from it, a key borrows its name, and module strings this code creates
//! ([`Owned`]) are freed on drop — so the borrow checker, not comments, keeps pointers valid.
//!
//! Wrapped: module strings, the low-level key API (hash / list / sorted-set operations through the
//! raw `RedisModule_*` functions, no `ctx.call`), effect replication, replies, the getkeys
//! callback, and command registration (flags, arity, key specs, ACL categories).

// `api!` reads a `static mut` function pointer (unsafe) and is also used inside unsafe blocks.
#![allow(unused_unsafe)]

use std::ffi::{c_char, c_int, c_long, c_void, CStr, CString};
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::OnceLock;

use valkey_module::raw;

macro_rules! api {
    ($name:ident) => {
        // Every function used here exists on Valkey 8.0; a missing one is a load-time bug.
        unsafe { raw::$name.expect(stringify!($name)) }
    };
}

/// The context of one command call; everything borrowed from it lives at most as long (`'a`).
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    raw: *mut raw::RedisModuleCtx,
    _call: PhantomData<&'a ()>,
}

/// A module string this code does not own: an argv entry (valid for the call) or a literal
/// (valid forever).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Str<'a> {
    raw: *mut raw::RedisModuleString,
    _owner: PhantomData<&'a ()>,
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
    raw: *mut raw::RedisModuleString,
}

impl<'a> Owned<'a> {
    fn adopt(ctx: Ctx<'a>, raw: *mut raw::RedisModuleString) -> Option<Owned<'a>> {
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

/// The Valkey type found at a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// No key.
    Empty,
    /// A string.
    String,
    /// A list.
    List,
    /// A hash.
    Hash,
    /// A sorted set.
    Zset,
    /// Anything else (set, stream, module type).
    Other,
}

/// An open key, closed on drop. It lives within the call (`'a`) and borrows its name (`'k`), which
/// its writes replicate, or owns it ([`Ctx::open_named`]); what it hands out (popped ids, hash
/// values) lives for the call.
pub struct Key<'a, 'k> {
    ctx: Ctx<'a>,
    raw: *mut raw::RedisModuleKey,
    name: Str<'k>,
    /// The name this key owns, if any (`name` points at it); freed after the key is closed.
    _owned: Option<Owned<'a>>,
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

    /// Opens `name` for reading and writing (a missing key opens as [`Kind::Empty`]).
    pub fn open<'k>(self, name: Str<'k>) -> Key<'a, 'k> {
        let mode = (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int;
        // SAFETY: a valid ctx and a live name; the key is closed on drop, within the call.
        let raw = unsafe { api!(RedisModule_OpenKey)(self.raw, name.raw, mode) };
        Key {
            ctx: self,
            raw,
            name,
            _owned: None,
        }
    }

    /// Opens `name` as [`open`](Self::open) does, the key owning its name: a key that can be
    /// handed back from where its name was made.
    pub fn open_named(self, name: Owned<'a>) -> Key<'a, 'a> {
        let borrowed = Str {
            raw: name.raw,
            _owner: PhantomData,
        };
        let mut key = self.open(borrowed);
        // `key.name` points at the string the key now keeps alive; `name()` hands it out only
        // for as long as the key is borrowed.
        key._owned = Some(name);
        key
    }

    /// Opens `name` for reading only; `None` when the key does not exist.
    pub fn read<'k>(self, name: Str<'k>) -> Option<Key<'a, 'k>> {
        // SAFETY: as in `open`.
        let raw = unsafe {
            api!(RedisModule_OpenKey)(self.raw, name.raw, raw::REDISMODULE_READ as c_int)
        };
        (!raw.is_null()).then(|| Key {
            ctx: self,
            raw,
            name,
            _owned: None,
        })
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

    /// The ACL user of the client behind this call (`None` when it has none, e.g. the AOF).
    pub fn user(self) -> Option<User<'a>> {
        // SAFETY: a valid ctx with a client; the name string is freed here, the user on drop.
        unsafe {
            let name = api!(RedisModule_GetCurrentUserName)(self.raw);
            if name.is_null() {
                return None;
            }
            let user = api!(RedisModule_GetModuleUserFromUserName)(name);
            api!(RedisModule_FreeString)(self.raw, name);
            (!user.is_null()).then(|| User {
                raw: user,
                _call: PhantomData,
            })
        }
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

    /// Blocks the client on `key` for at most `timeout_ms`: when the key is signalled ready the
    /// verb's own handler runs again ([`blocked_ready`]); on timeout [`blocked_timeout`] replies.
    /// `deadline` (ms since the epoch) is handed to those callbacks. Served also while the key is
    /// missing (`UNBLOCK_DELETED`): a SCHEDULE or RETRY signals an empty pending, so that a due
    /// time earlier than the wait's end answers the claim early.
    pub fn block_on_key(self, key: Str, timeout_ms: i64, deadline: i64) {
        let mut keys = [key.raw];
        let privdata = Box::into_raw(Box::new(deadline)).cast::<c_void>();
        // SAFETY: a valid ctx of a command that may block; the server keeps its own reference to
        // the key name; privdata is freed by `free_deadline`.
        unsafe {
            api!(RedisModule_BlockClientOnKeysWithFlags)(
                self.raw,
                Some(blocked_ready),
                Some(blocked_timeout),
                Some(free_deadline),
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

    /// Replies with an error; `text` starts with its code (`ERR`, `WRONGTYPE`). NUL becomes a space.
    pub fn reply_error(self, text: &[u8]) {
        let mut z = Vec::with_capacity(text.len() + 1);
        z.extend(text.iter().map(|&b| if b == 0 { b' ' } else { b }));
        z.push(0);
        // SAFETY: a valid ctx and a NUL-terminated buffer the server copies.
        unsafe { api!(RedisModule_ReplyWithError)(self.raw, z.as_ptr().cast::<c_char>()) };
    }
}

impl<'a, 'k> Key<'a, 'k> {
    /// The key's Valkey type.
    pub fn kind(&self) -> Kind {
        // SAFETY: an open key (null opens read-only missing keys are never wrapped).
        let t = unsafe { api!(RedisModule_KeyType)(self.raw) } as isize;
        match t {
            raw::REDISMODULE_KEYTYPE_EMPTY => Kind::Empty,
            raw::REDISMODULE_KEYTYPE_STRING => Kind::String,
            raw::REDISMODULE_KEYTYPE_LIST => Kind::List,
            raw::REDISMODULE_KEYTYPE_HASH => Kind::Hash,
            raw::REDISMODULE_KEYTYPE_ZSET => Kind::Zset,
            _ => Kind::Other,
        }
    }

    /// Whether the key is missing or has type `want`.
    pub fn is_empty_or(&self, want: Kind) -> bool {
        let k = self.kind();
        k == Kind::Empty || k == want
    }

    /// The key's name, for as long as the key is borrowed (it may own the name).
    pub fn name(&self) -> Str<'_> {
        self.name
    }

    /// The call this key was opened in.
    pub fn ctx(&self) -> Ctx<'a> {
        self.ctx
    }

    /// Length of the value (list length, set cardinality…).
    pub fn value_len(&self) -> usize {
        // SAFETY: an open key.
        unsafe { api!(RedisModule_ValueLength)(self.raw) }
    }

    /// The bytes of a string value (read access), valid while the key is open and unchanged.
    pub fn string(&self) -> &[u8] {
        let mut len = 0usize;
        // SAFETY: an open key; the slice borrows `self`, so it cannot outlive the key.
        let p = unsafe {
            api!(RedisModule_StringDMA)(self.raw, &mut len, raw::REDISMODULE_READ as c_int)
        };
        if p.is_null() || len == 0 {
            return &[];
        }
        // SAFETY: `len` readable bytes at `p` while the key is open.
        unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
    }

    /// Deletes the key.
    pub fn delete(&self) {
        // SAFETY: a key opened for writing.
        unsafe { api!(RedisModule_DeleteKey)(self.raw) };
    }

    /// `HGET key field`.
    pub fn hget(&self, field: Str) -> Option<Owned<'a>> {
        let mut out: *mut raw::RedisModuleString = ptr::null_mut();
        // SAFETY: an open key, a live field name, an out pointer the server fills (or leaves null).
        unsafe {
            api!(RedisModule_HashGet)(
                self.raw,
                raw::REDISMODULE_HASH_NONE as c_int,
                field.raw,
                &mut out as *mut *mut raw::RedisModuleString,
                ptr::null_mut::<c_void>(),
            )
        };
        Owned::adopt(self.ctx, out)
    }

    /// `HSET key f1 v1 [f2 v2 …]`, replicated as that effect: one place lists the fields, so the
    /// write and what replicas and the AOF receive cannot drift apart.
    pub fn hset(&self, pairs: &[(Str, Str)]) {
        let f = api!(RedisModule_HashSet);
        let (k, n, z) = (
            self.raw,
            raw::REDISMODULE_HASH_NONE as c_int,
            ptr::null_mut::<c_void>(),
        );
        // SAFETY: a key opened for writing; every field and value is a live module string; the
        // variadic list ends with NULL.
        unsafe {
            match *pairs {
                [(a, b)] => f(k, n, a.raw, b.raw, z),
                [(a, b), (c, d)] => f(k, n, a.raw, b.raw, c.raw, d.raw, z),
                [(a, b), (c, d), (e, g)] => f(k, n, a.raw, b.raw, c.raw, d.raw, e.raw, g.raw, z),
                [(a, b), (c, d), (e, g), (h, i)] => f(
                    k, n, a.raw, b.raw, c.raw, d.raw, e.raw, g.raw, h.raw, i.raw, z,
                ),
                [(a, b), (c, d), (e, g), (h, i), (j, l)] => f(
                    k, n, a.raw, b.raw, c.raw, d.raw, e.raw, g.raw, h.raw, i.raw, j.raw, l.raw, z,
                ),
                _ => {
                    let mut set = 0;
                    for &(a, b) in pairs {
                        set += f(k, n, a.raw, b.raw, z);
                    }
                    set
                }
            }
        };
        let mut args: Vec<Str> = Vec::with_capacity(1 + 2 * pairs.len());
        args.push(self.name);
        for &(field, value) in pairs {
            args.push(field);
            args.push(value);
        }
        self.ctx.replicate(c"HSET", &args);
    }

    /// `HDEL key f1 [f2 …]`, replicated as that effect.
    pub fn hdel(&self, fields: &[Str]) {
        let f = api!(RedisModule_HashSet);
        let del = raw::REDISMODULE_HASH_DELETE as *mut raw::RedisModuleString;
        for field in fields {
            // SAFETY: a key opened for writing; the value REDISMODULE_HASH_DELETE deletes the field.
            unsafe {
                f(
                    self.raw,
                    raw::REDISMODULE_HASH_NONE as c_int,
                    field.raw,
                    del,
                    ptr::null_mut::<c_void>(),
                )
            };
        }
        let mut args: Vec<Str> = Vec::with_capacity(1 + fields.len());
        args.push(self.name);
        args.extend_from_slice(fields);
        self.ctx.replicate(c"HDEL", &args);
    }

    /// `LREM key 0 ele`: every occurrence of `ele` leaves the list; how many did. Not replicated.
    pub fn list_remove(&self, ele: &[u8]) -> usize {
        if self.kind() != Kind::List {
            return 0;
        }
        let mut removed = 0;
        let mut i = 0i64;
        while (i as usize) < self.value_len() {
            if self.index(i).is_some_and(|x| x.bytes() == ele) {
                // SAFETY: a list key opened for writing, an index within its length.
                unsafe { api!(RedisModule_ListDelete)(self.raw, i as c_long) };
                removed += 1;
            } else {
                i += 1;
            }
        }
        removed
    }

    /// `LPUSH` (head) or `RPUSH` (tail) of one element.
    pub fn push(&self, tail: bool, ele: Str) {
        let at = if tail {
            raw::REDISMODULE_LIST_TAIL
        } else {
            raw::REDISMODULE_LIST_HEAD
        };
        // SAFETY: a key opened for writing, a live element.
        unsafe { api!(RedisModule_ListPush)(self.raw, at as c_int, ele.raw) };
    }

    /// `LPOP` one element.
    pub fn pop_head(&self) -> Option<Owned<'a>> {
        // SAFETY: a key opened for writing; the popped string is handed to us.
        let s = unsafe { api!(RedisModule_ListPop)(self.raw, raw::REDISMODULE_LIST_HEAD as c_int) };
        Owned::adopt(self.ctx, s)
    }

    /// `RPOP` one element.
    pub fn pop_tail(&self) -> Option<Owned<'a>> {
        // SAFETY: a key opened for writing; the popped string is handed to us.
        let s = unsafe { api!(RedisModule_ListPop)(self.raw, raw::REDISMODULE_LIST_TAIL as c_int) };
        Owned::adopt(self.ctx, s)
    }

    /// `LINDEX key index` (negative counts from the tail).
    pub fn index(&self, index: i64) -> Option<Owned<'a>> {
        // SAFETY: an open list key; the returned string is ours to free.
        let s = unsafe { api!(RedisModule_ListGet)(self.raw, index as c_long) };
        Owned::adopt(self.ctx, s)
    }

    /// `ZADD key score ele`.
    pub fn zadd(&self, score: f64, ele: Str) {
        let mut flags: c_int = 0;
        // SAFETY: a key opened for writing, a live element.
        unsafe { api!(RedisModule_ZsetAdd)(self.raw, score, ele.raw, &mut flags) };
    }

    /// `ZADD key LT score ele`: adds, or lowers an existing score; whether anything changed.
    pub fn zadd_lt(&self, score: f64, ele: Str) -> bool {
        let mut flags: c_int = raw::REDISMODULE_ZADD_LT as c_int;
        // SAFETY: a key opened for writing, a live element.
        unsafe { api!(RedisModule_ZsetAdd)(self.raw, score, ele.raw, &mut flags) };
        flags & (raw::REDISMODULE_ZADD_ADDED | raw::REDISMODULE_ZADD_UPDATED) as c_int != 0
    }

    /// The lowest score of a sorted set, if any.
    pub fn first_score(&self) -> Option<f64> {
        if self.kind() != Kind::Zset {
            return None;
        }
        // SAFETY: an open sorted-set key; the range iterator is stopped before returning.
        unsafe {
            let ok = api!(RedisModule_ZsetFirstInScoreRange)(
                self.raw,
                raw::REDISMODULE_NEGATIVE_INFINITE,
                raw::REDISMODULE_POSITIVE_INFINITE,
                0,
                0,
            );
            if ok != raw::Status::Ok as c_int {
                return None;
            }
            let mut score = 0f64;
            let ele = api!(RedisModule_ZsetRangeCurrentElement)(self.raw, &mut score);
            let found = Owned::adopt(self.ctx, ele).map(|_| score);
            api!(RedisModule_ZsetRangeStop)(self.raw);
            found
        }
    }

    /// `ZREM key ele`; whether it was a member.
    pub fn zrem(&self, ele: Str) -> bool {
        let mut deleted: c_int = 0;
        // SAFETY: a key opened for writing, a live element.
        unsafe { api!(RedisModule_ZsetRem)(self.raw, ele.raw, &mut deleted) };
        deleted != 0
    }

    /// `ZSCORE key ele`.
    pub fn zscore(&self, ele: Str) -> Option<f64> {
        let mut score = 0f64;
        // SAFETY: an open sorted-set key, a live element.
        let ok = unsafe { api!(RedisModule_ZsetScore)(self.raw, ele.raw, &mut score) };
        (ok == raw::Status::Ok as c_int).then_some(score)
    }

    /// Members with score ≤ `max`, ascending (score, then member), at most `limit`.
    pub fn due(&self, max: f64, limit: u64) -> Vec<Owned<'a>> {
        let mut out = Vec::new();
        if limit == 0 || self.kind() != Kind::Zset {
            return out;
        }
        // SAFETY: an open sorted-set key; the range iterator is stopped before returning.
        unsafe {
            let ok = api!(RedisModule_ZsetFirstInScoreRange)(
                self.raw,
                raw::REDISMODULE_NEGATIVE_INFINITE,
                max,
                0,
                0,
            );
            if ok != raw::Status::Ok as c_int {
                return out;
            }
            while api!(RedisModule_ZsetRangeEndReached)(self.raw) == 0 && (out.len() as u64) < limit
            {
                let mut score = 0f64;
                let ele = api!(RedisModule_ZsetRangeCurrentElement)(self.raw, &mut score);
                match Owned::adopt(self.ctx, ele) {
                    Some(o) => out.push(o),
                    None => break,
                }
                if api!(RedisModule_ZsetRangeNext)(self.raw) == 0 {
                    break;
                }
            }
            api!(RedisModule_ZsetRangeStop)(self.raw);
        }
        out
    }
}

impl Drop for Key<'_, '_> {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: opened by OpenKey, closed exactly once.
            unsafe { api!(RedisModule_CloseKey)(self.raw) };
        }
    }
}

/// The server's clock in ms since the epoch.
pub fn now_ms() -> i64 {
    // SAFETY: no arguments; callable from any command.
    unsafe { api!(RedisModule_Milliseconds)() }
}

/// Strings every call needs, created once at load and never freed.
pub struct Literals {
    pub state: Str<'static>,
    pub payload: Str<'static>,
    pub attempts: Str<'static>,
    pub created_ms: Str<'static>,
    pub due_ms: Str<'static>,
    pub deadline_ms: Str<'static>,
    pub reason: Str<'static>,
    pub buried_ms: Str<'static>,
    pub pending: Str<'static>,
    pub scheduled: Str<'static>,
    pub active: Str<'static>,
    pub dead: Str<'static>,
    pub zero: Str<'static>,
    pub version_key: Str<'static>,
    pub token: Str<'static>,
    pub wire: Str<'static>,
    pub wire_value: Str<'static>,
    pub paused: Str<'static>,
    pub tokens: Str<'static>,
    pub enqueued: Str<'static>,
    pub acked: Str<'static>,
    pub retried: Str<'static>,
    pub buried: Str<'static>,
    pub ready: Str<'static>,
    pub due: Str<'static>,
    pub lt: Str<'static>,
}

// SAFETY: the strings are immutable after load and only touched under the server's lock.
unsafe impl Sync for Literals {}
// SAFETY: as above.
unsafe impl Send for Literals {}

static LITERALS: OnceLock<Literals> = OnceLock::new();

fn literal(b: &[u8]) -> Str<'static> {
    // SAFETY: a string with no context is never freed automatically; it lives for the process.
    let raw = unsafe {
        api!(RedisModule_CreateString)(ptr::null_mut(), b.as_ptr().cast::<c_char>(), b.len())
    };
    Str {
        raw,
        _owner: PhantomData,
    }
}

/// Creates the shared literals; called once from `OnLoad`.
pub fn init_literals() {
    LITERALS.get_or_init(|| Literals {
        state: literal(b"state"),
        payload: literal(b"payload"),
        attempts: literal(b"attempts"),
        created_ms: literal(b"created_ms"),
        due_ms: literal(b"due_ms"),
        deadline_ms: literal(b"deadline_ms"),
        reason: literal(b"reason"),
        buried_ms: literal(b"buried_ms"),
        pending: literal(b"pending"),
        scheduled: literal(b"scheduled"),
        active: literal(b"active"),
        dead: literal(b"dead"),
        zero: literal(b"0"),
        version_key: literal(b"{emq}:version"),
        token: literal(b"token"),
        wire: literal(b"wire"),
        wire_value: literal(b"5"),
        paused: literal(b"paused"),
        tokens: literal(b"tokens"),
        enqueued: literal(b"enqueued"),
        acked: literal(b"acked"),
        retried: literal(b"retried"),
        buried: literal(b"buried"),
        ready: literal(b"ready"),
        due: literal(b"due"),
        lt: literal(b"LT"),
    });
}

/// The shared literals.
pub fn lit() -> &'static Literals {
    LITERALS.get().expect("literals are created at load")
}

/// An ACL user, for checking keys a verb derives (the server checks declared keys itself).
pub struct User<'a> {
    raw: *mut raw::RedisModuleUser,
    _call: PhantomData<&'a ()>,
}

impl User<'_> {
    /// Whether the user may read and write `key` (the flags of the declared key's spec).
    pub fn may_access(&self, key: Str) -> bool {
        self.may(
            key,
            raw::REDISMODULE_CMD_KEY_ACCESS | raw::REDISMODULE_CMD_KEY_UPDATE,
        )
    }

    /// Whether the user may read `key` (the fence's read, as the scripts' `GET`).
    pub fn may_read(&self, key: Str) -> bool {
        self.may(key, raw::REDISMODULE_CMD_KEY_ACCESS)
    }

    fn may(&self, key: Str, flags: u32) -> bool {
        // SAFETY: a live user handle and key name.
        unsafe {
            api!(RedisModule_ACLCheckKeyPermissions)(self.raw, key.raw, flags as c_int)
                == raw::Status::Ok as c_int
        }
    }
}

impl Drop for User<'_> {
    fn drop(&mut self) {
        // SAFETY: obtained from GetModuleUserFromUserName, freed once.
        unsafe { api!(RedisModule_FreeModuleUser)(self.raw) };
    }
}

/// A blocked client's key was signalled ready: run its verb again; unblock it when served.
extern "C" fn blocked_ready(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    // SAFETY: the server passes the blocked call's argv and the privdata set at block time.
    let (ctx, argv, deadline) = unsafe { callback_args(ctx, argv, argc) };
    if crate::command::serve_blocked(ctx, argv, deadline) {
        raw::Status::Ok as c_int
    } else {
        raw::Status::Err as c_int
    }
}

/// A blocked client's time ran out: it gets an empty claim and asks again.
extern "C" fn blocked_timeout(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    // SAFETY: as in `blocked_ready`.
    let (ctx, _, _) = unsafe { callback_args(ctx, argv, argc) };
    crate::command::blocked_timeout(ctx);
    raw::Status::Ok as c_int
}

extern "C" fn free_deadline(_ctx: *mut raw::RedisModuleCtx, privdata: *mut c_void) {
    if !privdata.is_null() {
        // SAFETY: made by Box::into_raw in `block_on_key`, freed once by the server's call here.
        drop(unsafe { Box::from_raw(privdata.cast::<i64>()) });
    }
}

/// The context, argv and deadline of a blocked client's callback.
///
/// # Safety
/// `ctx` must be a callback context of a client blocked by [`Ctx::block_on_key`], with its argv.
unsafe fn callback_args<'a>(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> (Ctx<'a>, &'a [Str<'a>], i64) {
    let privdata = api!(RedisModule_GetBlockedClientPrivateData)(ctx).cast::<i64>();
    let deadline = if privdata.is_null() { 0 } else { *privdata };
    let argv: &[Str] = if argv.is_null() || argc <= 0 {
        &[]
    } else {
        std::slice::from_raw_parts(argv.cast::<Str>(), argc as usize)
    };
    (
        Ctx {
            raw: ctx,
            _call: PhantomData,
        },
        argv,
        deadline,
    )
}

/// The C entry point of verb `V` (its index in `crate::wire::VERBS`): argv as safe borrowed
/// strings, handed to the dispatcher.
pub extern "C" fn entry<const V: usize>(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    let ctx = Ctx {
        raw: ctx,
        _call: PhantomData,
    };
    let argv: &[Str] = if argv.is_null() || argc <= 0 {
        &[]
    } else {
        // SAFETY: the server passes `argc` live strings for this call; `Str` is a transparent
        // pointer, and the slice does not outlive the call (it borrows the call's `Ctx`).
        unsafe { std::slice::from_raw_parts(argv.cast::<Str>(), argc as usize) }
    };
    crate::command::dispatch(ctx, argv, V);
    raw::Status::Ok as c_int
}

/// A command's C entry point.
pub type Entry =
    extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int;

/// Key-spec flags of every declared key: read-write, accessed and updated.
const KEY_FLAGS: u64 = (raw::REDISMODULE_CMD_KEY_RW
    | raw::REDISMODULE_CMD_KEY_ACCESS
    | raw::REDISMODULE_CMD_KEY_UPDATE) as u64;

static INFO_VERSION: raw::RedisModuleCommandInfoVersion = raw::RedisModuleCommandInfoVersion {
    version: 1,
    sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
    sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
    sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
};

/// What registration declares for one command.
pub struct Registration<'s> {
    /// The command name (`emq.enqueue`).
    pub command: &'s str,
    /// Command flags (`write deny-oom getkeys-api`).
    pub flags: &'s str,
    /// The key spec's notes.
    pub notes: &'s str,
    /// The command's summary.
    pub summary: &'s str,
    /// ACL categories (`emq write`).
    pub categories: &'s str,
}

/// Registers one command: its flags, arity -2, one key spec (begin-search index 1, find-keys
/// keynum 0/1/1) and its ACL categories. Called from `OnLoad` with the module's context.
pub fn register(
    load: &valkey_module::Context,
    r: &Registration,
    entry: Entry,
) -> Result<(), String> {
    let ctx = load.ctx;
    let c = |s: &str| CString::new(s).map_err(|e| e.to_string());
    let (name, flags, notes, summary, categories) = (
        c(r.command)?,
        c(r.flags)?,
        c(r.notes)?,
        c(r.summary)?,
        c(r.categories)?,
    );
    // SAFETY: the load context; every C string outlives the call that reads it (the server copies
    // names, specs and categories).
    unsafe {
        let created = api!(RedisModule_CreateCommand)(
            ctx,
            name.as_ptr(),
            Some(entry),
            flags.as_ptr(),
            0,
            0,
            0,
        );
        if created != raw::Status::Ok as c_int {
            return Err(format!("cannot create {}", r.command));
        }
        let cmd = api!(RedisModule_GetCommand)(ctx, name.as_ptr());
        if cmd.is_null() {
            return Err(format!("cannot find {}", r.command));
        }
        let mut spec: raw::RedisModuleCommandKeySpec = MaybeUninit::zeroed().assume_init();
        spec.notes = notes.as_ptr();
        spec.flags = KEY_FLAGS;
        spec.begin_search_type = raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
        spec.bs.index.pos = 1;
        spec.find_keys_type = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_KEYNUM;
        spec.fk.keynum.keynumidx = 0;
        spec.fk.keynum.firstkey = 1;
        spec.fk.keynum.keystep = 1;
        let mut specs = [spec, MaybeUninit::zeroed().assume_init()];
        let info = raw::RedisModuleCommandInfo {
            version: &INFO_VERSION,
            summary: summary.as_ptr(),
            complexity: ptr::null(),
            since: c"0.1.0".as_ptr(),
            history: ptr::null_mut(),
            tips: ptr::null(),
            arity: -2,
            key_specs: specs.as_mut_ptr(),
            args: ptr::null_mut(),
        };
        if api!(RedisModule_SetCommandInfo)(cmd, &info) != raw::Status::Ok as c_int {
            return Err(format!("cannot set command info of {}", r.command));
        }
        if api!(RedisModule_SetCommandACLCategories)(cmd, categories.as_ptr())
            != raw::Status::Ok as c_int
        {
            return Err(format!("cannot set ACL categories of {}", r.command));
        }
    }
    Ok(())
}
