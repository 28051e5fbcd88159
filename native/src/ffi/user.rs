//! The caller's ACL user, for the keys a verb derives (the server checks declared keys itself).

use std::ffi::c_int;
use std::marker::PhantomData;

use valkey_module::raw;

use super::{Ctx, Str};

impl<'a> Ctx<'a> {
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
