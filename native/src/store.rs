//! The low-level key API, wrapped: module strings, open keys, hash / list / sorted-set
//! operations through the raw `RedisModule_*` functions (no `ctx.call`), effect replication and
//! replies. Every unsafe call of the module lives here.

// `api!` reads a `static mut` function pointer (unsafe) and is also used inside unsafe blocks.
#![allow(unused_unsafe)]
// Pointers handed to these functions come from the server for the current call (argv, ctx,
// open keys) and stay valid for it; marking every wrapper `unsafe` would move nothing.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::{c_char, c_int, c_long, c_void, CStr};
use std::ptr;
use std::sync::OnceLock;

use valkey_module::raw;

/// A module string pointer (owned by the server, the call, or an [`Owned`]).
pub type Str = *mut raw::RedisModuleString;
/// The command context pointer.
pub type Ctx = *mut raw::RedisModuleCtx;

macro_rules! api {
    ($name:ident) => {
        // Every function used here exists on Valkey 8.0; a missing one is a load-time bug.
        unsafe { raw::$name.expect(stringify!($name)) }
    };
}

/// The bytes of a module string. The slice lives as long as the string is not freed.
pub fn bytes<'a>(s: Str) -> &'a [u8] {
    let mut len = 0usize;
    let p = unsafe { api!(RedisModule_StringPtrLen)(s, &mut len) };
    if p.is_null() || len == 0 {
        return &[];
    }
    unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
}

/// A module string this code created or was handed (list pop, hash get…); freed on drop.
pub struct Owned {
    ctx: Ctx,
    ptr: Str,
}

impl Owned {
    /// A new string with these bytes.
    pub fn new(ctx: Ctx, b: &[u8]) -> Owned {
        let ptr =
            unsafe { api!(RedisModule_CreateString)(ctx, b.as_ptr().cast::<c_char>(), b.len()) };
        Owned { ctx, ptr }
    }

    /// The decimal string of `n`.
    pub fn int(ctx: Ctx, n: i64) -> Owned {
        let ptr = unsafe { api!(RedisModule_CreateStringFromLongLong)(ctx, n) };
        Owned { ctx, ptr }
    }

    /// Takes ownership of a string the server returned (may be null: then `None`).
    fn adopt(ctx: Ctx, ptr: Str) -> Option<Owned> {
        (!ptr.is_null()).then_some(Owned { ctx, ptr })
    }

    /// The raw pointer, for API calls and replication.
    pub fn ptr(&self) -> Str {
        self.ptr
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        bytes(self.ptr)
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        unsafe { api!(RedisModule_FreeString)(self.ctx, self.ptr) };
    }
}

/// Strings every call needs, created once at load and never freed.
pub struct Literals {
    pub state: Str,
    pub payload: Str,
    pub attempts: Str,
    pub created_ms: Str,
    pub due_ms: Str,
    pub deadline_ms: Str,
    pub reason: Str,
    pub buried_ms: Str,
    pub pending: Str,
    pub scheduled: Str,
    pub active: Str,
    pub dead: Str,
    pub zero: Str,
    pub version_key: Str,
}

// SAFETY: the strings are immutable after load and only touched under the server's lock.
unsafe impl Sync for Literals {}
unsafe impl Send for Literals {}

static LITERALS: OnceLock<Literals> = OnceLock::new();

fn literal(b: &[u8]) -> Str {
    unsafe { api!(RedisModule_CreateString)(ptr::null_mut(), b.as_ptr().cast::<c_char>(), b.len()) }
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
    });
}

/// The shared literals.
pub fn lit() -> &'static Literals {
    LITERALS.get().expect("literals are created at load")
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

/// An open key; closed on drop. It keeps its name so that its writes can replicate themselves.
pub struct Key {
    ctx: Ctx,
    ptr: *mut raw::RedisModuleKey,
    name: Str,
}

impl Key {
    /// Opens `name` for reading and writing (a missing key opens as [`Kind::Empty`]).
    pub fn write(ctx: Ctx, name: Str) -> Key {
        let mode = (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int;
        let ptr = unsafe { api!(RedisModule_OpenKey)(ctx, name, mode) };
        Key { ctx, ptr, name }
    }

    /// Opens `name` for reading only; `None` when the key does not exist.
    pub fn read(ctx: Ctx, name: Str) -> Option<Key> {
        let ptr = unsafe { api!(RedisModule_OpenKey)(ctx, name, raw::REDISMODULE_READ as c_int) };
        (!ptr.is_null()).then_some(Key { ctx, ptr, name })
    }

    /// The key's Valkey type.
    pub fn kind(&self) -> Kind {
        let t = unsafe { api!(RedisModule_KeyType)(self.ptr) } as isize;
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
        matches!(self.kind(), Kind::Empty) || self.kind() == want
    }

    /// Length of the value (list length, set cardinality…).
    pub fn value_len(&self) -> usize {
        unsafe { api!(RedisModule_ValueLength)(self.ptr) }
    }

    /// The bytes of a string value (read access).
    pub fn string(&self) -> &[u8] {
        let mut len = 0usize;
        let p = unsafe {
            api!(RedisModule_StringDMA)(self.ptr, &mut len, raw::REDISMODULE_READ as c_int)
        };
        if p.is_null() || len == 0 {
            return &[];
        }
        unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
    }

    /// Deletes the key.
    pub fn delete(&self) {
        unsafe { api!(RedisModule_DeleteKey)(self.ptr) };
    }

    /// `HGET key field`.
    pub fn hget(&self, field: Str) -> Option<Owned> {
        let mut out: Str = ptr::null_mut();
        unsafe {
            api!(RedisModule_HashGet)(
                self.ptr,
                raw::REDISMODULE_HASH_NONE as c_int,
                field,
                &mut out as *mut Str,
                ptr::null_mut::<c_void>(),
            )
        };
        Owned::adopt(self.ctx, out)
    }

    /// `HSET key f1 v1 [f2 v2 …]` (up to 6 pairs in one call), replicated as that effect.
    pub fn hset(&self, pairs: &[(Str, Str)]) {
        let f = api!(RedisModule_HashSet);
        let k = self.ptr;
        let n = raw::REDISMODULE_HASH_NONE as c_int;
        let z = ptr::null_mut::<c_void>();
        unsafe {
            match *pairs {
                [(a, b)] => f(k, n, a, b, z),
                [(a, b), (c, d)] => f(k, n, a, b, c, d, z),
                [(a, b), (c, d), (e, g)] => f(k, n, a, b, c, d, e, g, z),
                [(a, b), (c, d), (e, g), (h, i)] => f(k, n, a, b, c, d, e, g, h, i, z),
                [(a, b), (c, d), (e, g), (h, i), (j, l)] => {
                    f(k, n, a, b, c, d, e, g, h, i, j, l, z)
                }
                _ => {
                    let mut set = 0;
                    for &(a, b) in pairs {
                        set += f(k, n, a, b, z);
                    }
                    set
                }
            }
        };
        // The effect, replicated as written: one place lists the fields, so the write and what
        // replicas and the AOF receive cannot drift apart.
        let mut args: Vec<Str> = Vec::with_capacity(1 + 2 * pairs.len());
        args.push(self.name);
        for &(field, value) in pairs {
            args.push(field);
            args.push(value);
        }
        replicate(self.ctx, c"HSET", &args);
    }

    /// `LPUSH` (head) or `RPUSH` (tail) of one element.
    pub fn push(&self, tail: bool, ele: Str) {
        let at = if tail {
            raw::REDISMODULE_LIST_TAIL
        } else {
            raw::REDISMODULE_LIST_HEAD
        };
        unsafe { api!(RedisModule_ListPush)(self.ptr, at as c_int, ele) };
    }

    /// `RPOP` one element.
    pub fn pop_tail(&self) -> Option<Owned> {
        let s = unsafe { api!(RedisModule_ListPop)(self.ptr, raw::REDISMODULE_LIST_TAIL as c_int) };
        Owned::adopt(self.ctx, s)
    }

    /// `LINDEX key index` (negative counts from the tail).
    pub fn index(&self, index: i64) -> Option<Owned> {
        let s = unsafe { api!(RedisModule_ListGet)(self.ptr, index as c_long) };
        Owned::adopt(self.ctx, s)
    }

    /// `ZADD key score ele`.
    pub fn zadd(&self, score: f64, ele: Str) {
        let mut flags: c_int = 0;
        unsafe { api!(RedisModule_ZsetAdd)(self.ptr, score, ele, &mut flags) };
    }

    /// `ZREM key ele`; whether it was a member.
    pub fn zrem(&self, ele: Str) -> bool {
        let mut deleted: c_int = 0;
        unsafe { api!(RedisModule_ZsetRem)(self.ptr, ele, &mut deleted) };
        deleted != 0
    }

    /// `ZSCORE key ele`.
    pub fn zscore(&self, ele: Str) -> Option<f64> {
        let mut score = 0f64;
        let ok = unsafe { api!(RedisModule_ZsetScore)(self.ptr, ele, &mut score) };
        (ok == raw::Status::Ok as c_int).then_some(score)
    }

    /// Members with score ≤ `max`, ascending (score, then member), at most `limit`.
    pub fn due(&self, max: f64, limit: u64) -> Vec<Owned> {
        let mut out = Vec::new();
        if limit == 0 || self.kind() != Kind::Zset {
            return out;
        }
        let f_first = api!(RedisModule_ZsetFirstInScoreRange);
        let ok = unsafe { f_first(self.ptr, raw::REDISMODULE_NEGATIVE_INFINITE, max, 0, 0) };
        if ok != raw::Status::Ok as c_int {
            return out;
        }
        let cur = api!(RedisModule_ZsetRangeCurrentElement);
        let next = api!(RedisModule_ZsetRangeNext);
        let end = api!(RedisModule_ZsetRangeEndReached);
        unsafe {
            while end(self.ptr) == 0 && (out.len() as u64) < limit {
                let mut score = 0f64;
                let ele = cur(self.ptr, &mut score);
                match Owned::adopt(self.ctx, ele) {
                    Some(o) => out.push(o),
                    None => break,
                }
                if next(self.ptr) == 0 {
                    break;
                }
            }
            api!(RedisModule_ZsetRangeStop)(self.ptr);
        }
        out
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            unsafe { api!(RedisModule_CloseKey)(self.ptr) };
        }
    }
}

/// The server's clock in ms since the epoch.
pub fn now_ms() -> i64 {
    unsafe { api!(RedisModule_Milliseconds)() }
}

/// Whether the server runs in cluster mode.
pub fn cluster_mode(ctx: Ctx) -> bool {
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx) } as u32;
    flags & raw::REDISMODULE_CTX_FLAGS_CLUSTER != 0
}

/// Replicates one effect command to replicas and the AOF (the server wraps a call's effects in
/// MULTI/EXEC).
pub fn replicate(ctx: Ctx, command: &CStr, args: &[Str]) {
    unsafe {
        api!(RedisModule_Replicate)(
            ctx,
            command.as_ptr(),
            c"v".as_ptr(),
            args.as_ptr(),
            args.len(),
        );
    }
}

/// Whether this invocation only asks for the key positions (the getkeys callback).
pub fn keys_request(ctx: Ctx) -> bool {
    unsafe { api!(RedisModule_IsKeysPositionRequest)(ctx) != 0 }
}

/// Declares argv position `pos` as a key (getkeys callback).
pub fn key_at(ctx: Ctx, pos: usize) {
    unsafe { api!(RedisModule_KeyAtPos)(ctx, pos as c_int) };
}

/// Replies with an integer.
pub fn reply_int(ctx: Ctx, n: i64) {
    unsafe { api!(RedisModule_ReplyWithLongLong)(ctx, n) };
}

/// Replies with nil.
pub fn reply_nil(ctx: Ctx) {
    unsafe { api!(RedisModule_ReplyWithNull)(ctx) };
}

/// Starts an array reply of `n` elements.
pub fn reply_array(ctx: Ctx, n: usize) {
    unsafe { api!(RedisModule_ReplyWithArray)(ctx, n as c_long) };
}

/// Replies with a bulk string.
pub fn reply_str(ctx: Ctx, s: Str) {
    unsafe { api!(RedisModule_ReplyWithString)(ctx, s) };
}

/// Replies with an error; `text` starts with its code (`ERR`, `WRONGTYPE`).
pub fn reply_error(ctx: Ctx, text: &[u8]) {
    let mut z = Vec::with_capacity(text.len() + 1);
    z.extend(text.iter().map(|&b| if b == 0 { b' ' } else { b }));
    z.push(0);
    unsafe { api!(RedisModule_ReplyWithError)(ctx, z.as_ptr().cast::<c_char>()) };
}
