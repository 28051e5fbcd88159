//! Command plumbing: one C entry point per verb hands its argv to the verb's handler, answers the
//! getkeys callback, and turns the handler's result into a reply. Registration declares the
//! flags, arity, key specs and ACL categories of `docs/WIRE.md`.

// ctx and argv come from the server for the current call and stay valid for it.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::{c_char, c_int, CStr, CString};
use std::mem::MaybeUninit;
use std::ptr;

use valkey_module::raw;

use crate::store::{self, Ctx, Owned, Str};
use crate::wire::{Refusal, Verb};

/// One call's context and argv.
pub struct Call<'a> {
    /// The command context.
    pub ctx: Ctx,
    argv: &'a [Str],
}

impl<'a> Call<'a> {
    /// Number of argv entries, the command name included.
    pub fn argc(&self) -> usize {
        self.argv.len()
    }

    /// argv entry `i` (0 is the command name).
    pub fn raw(&self, i: usize) -> Str {
        self.argv[i]
    }

    /// Bytes of argv entry `i`.
    pub fn bytes(&self, i: usize) -> &'a [u8] {
        store::bytes(self.argv[i])
    }

    /// Declared key `i` (0-based), after a successful shape check.
    pub fn key(&self, i: usize) -> Str {
        self.argv[2 + i]
    }

    /// Argument `i` after the keys (0-based), after a successful shape check.
    pub fn arg(&self, verb: &Verb, i: usize) -> Str {
        self.argv[2 + verb.keys + i]
    }
}

/// A successful reply.
pub enum Reply {
    /// An integer.
    Int(i64),
    /// Nil (CLAIM on an empty queue).
    Nil,
    /// CLAIM's `[id, payload, attempts]`.
    Claimed {
        id: Owned,
        payload: Option<Owned>,
        attempts: i64,
    },
}

/// A verb handler: runs the six steps and either writes everything or nothing.
pub type Handler = fn(&Call, &Verb) -> Result<Reply, Refusal>;

/// Entry point shared by every verb.
pub fn dispatch(
    ctx: Ctx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    verb: &Verb,
    handler: Handler,
) -> c_int {
    let argv: &[Str] = if argv.is_null() || argc <= 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(argv, argc as usize) }
    };
    if store::keys_request(ctx) {
        // getkeys callback: declare argv[2 .. 2+numkeys) when numkeys is the verb's and fits.
        if argv.len() >= 2 + verb.keys && store::bytes(argv[1]) == verb.numkeys {
            for pos in 2..2 + verb.keys {
                store::key_at(ctx, pos);
            }
        }
        return raw::Status::Ok as c_int;
    }
    let call = Call { ctx, argv };
    match handler(&call, verb) {
        Ok(Reply::Int(n)) => store::reply_int(ctx, n),
        Ok(Reply::Nil) => store::reply_nil(ctx),
        Ok(Reply::Claimed {
            id,
            payload,
            attempts,
        }) => {
            store::reply_array(ctx, 3);
            store::reply_str(ctx, id.ptr());
            match payload {
                Some(p) => store::reply_str(ctx, p.ptr()),
                None => store::reply_nil(ctx),
            }
            store::reply_int(ctx, attempts);
        }
        Err(refusal) => store::reply_error(ctx, &refusal.text(verb)),
    }
    raw::Status::Ok as c_int
}

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

/// Registers one verb: flags `write deny-oom getkeys-api`, arity -2, one key spec (begin-search
/// index 1, find-keys keynum 0/1/1), ACL categories `emq` + `write`.
pub fn register(
    ctx: Ctx,
    verb: &Verb,
    entry: extern "C" fn(Ctx, *mut *mut raw::RedisModuleString, c_int) -> c_int,
) -> Result<(), String> {
    let name = CStr::from_bytes_with_nul(verb.command.as_bytes()).map_err(|e| e.to_string())?;
    let flags = c"write deny-oom getkeys-api";
    let created = unsafe {
        raw::RedisModule_CreateCommand.ok_or("no CreateCommand")?(
            ctx,
            name.as_ptr(),
            Some(entry),
            flags.as_ptr(),
            0,
            0,
            0,
        )
    };
    if created != raw::Status::Ok as c_int {
        return Err(format!("cannot create {}", verb.name));
    }
    let cmd = unsafe { raw::RedisModule_GetCommand.ok_or("no GetCommand")?(ctx, name.as_ptr()) };
    if cmd.is_null() {
        return Err(format!("cannot find {}", verb.name));
    }

    let notes =
        CString::new(format!("{} keys, one queue", verb.keys)).map_err(|e| e.to_string())?;
    let mut spec: raw::RedisModuleCommandKeySpec = unsafe { MaybeUninit::zeroed().assume_init() };
    spec.notes = notes.as_ptr();
    spec.flags = KEY_FLAGS;
    spec.begin_search_type = raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
    spec.bs.index.pos = 1;
    spec.find_keys_type = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_KEYNUM;
    spec.fk.keynum.keynumidx = 0;
    spec.fk.keynum.firstkey = 1;
    spec.fk.keynum.keystep = 1;
    let terminator: raw::RedisModuleCommandKeySpec = unsafe { MaybeUninit::zeroed().assume_init() };
    let mut specs = [spec, terminator];
    let summary =
        CString::new(format!("EchoMQ wire-4 {}", verb.name)).map_err(|e| e.to_string())?;
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
    let ok = unsafe { raw::RedisModule_SetCommandInfo.ok_or("no SetCommandInfo")?(cmd, &info) };
    if ok != raw::Status::Ok as c_int {
        return Err(format!("cannot set command info of {}", verb.name));
    }
    let categories: *const c_char = c"emq write".as_ptr();
    let ok = unsafe {
        raw::RedisModule_SetCommandACLCategories.ok_or("no SetCommandACLCategories")?(
            cmd, categories,
        )
    };
    if ok != raw::Status::Ok as c_int {
        return Err(format!("cannot set ACL categories of {}", verb.name));
    }
    Ok(())
}
