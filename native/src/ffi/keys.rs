//! Open keys ([`Key`], closed on drop) and the low-level key API on them: the Valkey type found
//! ([`Kind`]), hash, list, sorted-set and stream operations through the raw `RedisModule_*`
//! functions (no `ctx.call`); `hset` and `hdel` replicate their own effect.

use std::ffi::{c_int, c_long, c_void};
use std::marker::PhantomData;
use std::ptr;

use valkey_module::raw;

use super::{Ctx, Owned, Str};

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
    /// A stream.
    Stream,
    /// Anything else (set, module type).
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
}

impl<'a, 'k> Key<'a, 'k> {
    /// Closes the handle, to be opened again by [`reopen`](Self::reopen) before its next use: a
    /// handle caches the value it found, so one kept open across another handle's write that
    /// makes or deletes the key would be stale (SETTLE closes its parts' keys after their checks
    /// and opens each part's again just before that part's writes).
    pub fn close(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: opened by OpenKey, closed exactly once (the pointer is cleared).
            unsafe { api!(RedisModule_CloseKey)(self.raw) };
            self.raw = ptr::null_mut();
        }
    }

    /// Whether the handle is open (not [`close`](Self::close)d).
    pub fn is_open(&self) -> bool {
        !self.raw.is_null()
    }

    /// The key for one use: this handle while it is open, else a new handle on its name, on the
    /// keyspace as it is now, closed when the use ends (a handle step 5 kept for step 6 and closed
    /// because another handle may have changed its key first).
    pub fn again(&self) -> Again<'_, 'a, 'k> {
        if self.is_open() {
            Again::Kept(self)
        } else {
            Again::Fresh(self.ctx.open(self.name))
        }
    }

    /// Opens the key again for reading and writing, on the keyspace as it is now.
    pub fn reopen(&mut self) {
        self.close();
        let mode = (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int;
        // SAFETY: a valid ctx and the live name the key borrows or owns.
        self.raw = unsafe { api!(RedisModule_OpenKey)(self.ctx.raw, self.name.raw, mode) };
    }

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
            raw::REDISMODULE_KEYTYPE_STREAM => Kind::Stream,
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

    /// `PEXPIREAT key at` (replicated as that, so a replica and the AOF expire it at the same
    /// instant): the key is deleted at `at` (ms since the epoch).
    pub fn pexpire_at(&self, at: i64) {
        // SAFETY: a key opened for writing, which exists.
        unsafe { api!(RedisModule_SetAbsExpire)(self.raw, at as raw::mstime_t) };
        let at = self.ctx.int(at);
        self.ctx.replicate(c"PEXPIREAT", &[self.name, at.as_str()]);
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

    /// `HGET key f` of each of `fields`, in one pass over the hash (`RM_ScanKey`): cheaper than a
    /// `HashGet` per field when most are looked up, as each of those searches a small (listpack)
    /// hash field by field from its start. Missing fields (or a key that is no hash) are `None`.
    pub fn hget_each<const N: usize>(&self, fields: [Str; N]) -> [Option<Owned<'a>>; N] {
        let mut scan = Scan {
            ctx: self.ctx,
            fields: fields.map(|f| f.bytes()),
            found: std::array::from_fn(|_| None),
        };
        if self.kind() != Kind::Hash {
            return scan.found;
        }
        // SAFETY: an open hash key; `scan` outlives the scan, and the callback only reads the
        // strings it is handed (and retains those it keeps); the cursor is destroyed here.
        unsafe {
            let cursor = api!(RedisModule_ScanCursorCreate)();
            let privdata = (&mut scan as *mut Scan<'_, 'a, N>).cast::<c_void>();
            while api!(RedisModule_ScanKey)(self.raw, cursor, Some(scanned::<N>), privdata) != 0 {}
            api!(RedisModule_ScanCursorDestroy)(cursor);
        }
        scan.found
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

    /// `ZINCRBY key by ele` (a missing member counts from 0); the new score.
    pub fn zincrby(&self, by: f64, ele: Str) -> f64 {
        let (mut flags, mut score): (c_int, f64) = (0, 0.0);
        // SAFETY: a key opened for writing, a live element, out pointers the server fills.
        unsafe { api!(RedisModule_ZsetIncrby)(self.raw, by, ele.raw, &mut flags, &mut score) };
        score
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

/// [`Key::hget_each`]'s scan: the fields looked up and the values found.
struct Scan<'f, 'a, const N: usize> {
    ctx: Ctx<'a>,
    fields: [&'f [u8]; N],
    found: [Option<Owned<'a>>; N],
}

/// One field of [`Key::hget_each`]'s scan: its value kept when the field is looked up.
unsafe extern "C" fn scanned<const N: usize>(
    _key: *mut raw::RedisModuleKey,
    field: *mut raw::RedisModuleString,
    value: *mut raw::RedisModuleString,
    privdata: *mut c_void,
) {
    // SAFETY: `privdata` is the `Scan` of the running `hget_each`; `field` and `value` live for
    // the callback, `value` retained once more to outlive it (freed by the `Owned`).
    unsafe {
        let scan = &mut *privdata.cast::<Scan<'_, '_, N>>();
        let field = Str {
            raw: field,
            _owner: PhantomData,
        };
        if let Some(i) = scan.fields.iter().position(|&f| f == field.bytes()) {
            if scan.found[i].is_none() && !value.is_null() {
                api!(RedisModule_RetainString)(scan.ctx.raw, value);
                scan.found[i] = Owned::adopt(scan.ctx, value);
            }
        }
    }
}

/// A key for one use ([`Key::again`]): the open handle itself, or a new one closed on drop.
pub enum Again<'s, 'a, 'k> {
    /// The handle, open.
    Kept(&'s Key<'a, 'k>),
    /// A new handle on its name.
    Fresh(Key<'a, 's>),
}

impl<'s, 'a, 'k> std::ops::Deref for Again<'s, 'a, 'k> {
    type Target = Key<'a, 's>;

    fn deref(&self) -> &Key<'a, 's> {
        match self {
            Again::Kept(k) => k,
            Again::Fresh(k) => k,
        }
    }
}

/// A stream entry's id, `<ms>-<seq>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamId {
    /// Its time part (ms).
    pub ms: u64,
    /// Its sequence within that ms.
    pub seq: u64,
}

impl Key<'_, '_> {
    /// `XADD key * f1 v1 …` (`pairs`: fields and values, alternating; an even count): the entry
    /// is appended with an id the server picks, as XADD `*` does (a missing key becomes a stream;
    /// clients blocked on the key are served as after an XADD). Not replicated: the caller
    /// replicates the entry with the id returned. `None` when the server refused (the key is not
    /// a stream, or its ids are exhausted).
    pub fn stream_add(&self, pairs: &[Str]) -> Option<StreamId> {
        debug_assert!(pairs.len().is_multiple_of(2), "fields and values");
        let mut id = raw::RedisModuleStreamID { ms: 0, seq: 0 };
        // SAFETY: a key opened for writing; `Str` is a transparent pointer, so `pairs` is an
        // array of `len` live module strings, which the server reads (and retains) during the
        // call and never writes through; `id` is an out value the server fills.
        let status = unsafe {
            api!(RedisModule_StreamAdd)(
                self.raw,
                raw::REDISMODULE_STREAM_ADD_AUTOID as c_int,
                &mut id,
                pairs
                    .as_ptr()
                    .cast_mut()
                    .cast::<*mut raw::RedisModuleString>(),
                (pairs.len() / 2) as i64,
            )
        };
        (status == raw::Status::Ok as c_int).then_some(StreamId {
            ms: id.ms,
            seq: id.seq,
        })
    }

    /// `XTRIM key MAXLEN <len>` (`Trim::Exact`: the oldest entries go until at most `len` are
    /// left) or `XTRIM key MAXLEN ~ <len>` (`Trim::Nodes`: only whole stream nodes go, while at
    /// least `len` entries stay — far cheaper per call, and at most one node, `stream-node-max-
    /// entries`, over `len`); how many went (0 for a key that is not a stream). Not replicated.
    pub fn stream_trim(&self, len: i64, trim: Trim) -> i64 {
        if self.kind() != Kind::Stream {
            return 0;
        }
        let flags = match trim {
            Trim::Exact => 0,
            Trim::Nodes => raw::REDISMODULE_STREAM_TRIM_APPROX as c_int,
        };
        // SAFETY: a stream key opened for writing; `flags` 0 or the one flag the API defines.
        let n = unsafe { api!(RedisModule_StreamTrimByLength)(self.raw, flags, len) };
        n.max(0)
    }
}

/// How [`Key::stream_trim`] trims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trim {
    /// To the length exactly (`MAXLEN <n>`).
    Exact,
    /// By whole nodes (`MAXLEN ~ <n>`).
    Nodes,
}

impl Drop for Key<'_, '_> {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: opened by OpenKey, closed exactly once.
            unsafe { api!(RedisModule_CloseKey)(self.raw) };
        }
    }
}
