//! Command registration: the C entry points ([`entry`], one per command, calling the command
//! layer's [`Dispatch`]) and what `OnLoad` declares for each command — flags, arity, the key spec,
//! the command info, ACL categories.

use std::ffi::{c_int, CString};
use std::mem::MaybeUninit;
use std::ptr;

use valkey_module::raw;

use super::{Ctx, Str};

/// What the C entry points call: the command layer's dispatcher, handed over as a type parameter
/// of [`entry`] when it builds its table of entry points.
pub trait Dispatch {
    /// Runs command `index` (its place in the table the entry points were made for) on one call's
    /// argv.
    fn dispatch<'a>(ctx: Ctx<'a>, argv: &'a [Str<'a>], index: usize);
}

/// The C entry point of command `I` of `D`'s table: argv as safe borrowed strings, handed to
/// `D::dispatch`.
///
/// # Safety
/// Only the server calls it, with a command's context and its `argc` live argv strings.
pub unsafe extern "C" fn entry<D: Dispatch, const I: usize>(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    // SAFETY: the server passes the call's context and its `argc` live strings.
    let (ctx, argv) = unsafe { Ctx::from_raw(ctx, argv, argc) };
    D::dispatch(ctx, argv, I);
    raw::Status::Ok as c_int
}

/// A command's C entry point.
pub type Entry = unsafe extern "C" fn(
    *mut raw::RedisModuleCtx,
    *mut *mut raw::RedisModuleString,
    c_int,
) -> c_int;

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

/// `VALKEYMODULE_OPTIONS_HANDLE_ATOMIC_SLOT_MIGRATION` (Valkey 9): the crate has no name for it yet.
const HANDLE_ATOMIC_SLOT_MIGRATION: c_int = 1 << 5;

/// Declares that the module handles Valkey 9's atomic slot migration (`CLUSTER MIGRATESLOTS`),
/// which the server refuses while a loaded module has not. True of this module: every write is
/// replicated as effects (the migration streams them), no state lives outside keys, and a blocked
/// CLAIM on a slot that moved is answered by the server (MOVED), never left waiting. Valkey 8
/// ignores the bit.
pub fn declare_module_options(load: &valkey_module::Context) {
    // SAFETY: the load context, during OnLoad.
    unsafe { api!(RedisModule_SetModuleOptions)(load.ctx, HANDLE_ATOMIC_SLOT_MIGRATION) };
}

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
