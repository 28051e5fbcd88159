//! The one door to the server's C API: every `unsafe` block of the module is in this folder. What
//! leaves it is safe and lifetime-bound — a [`Ctx`] lives for one call, argv strings ([`Str`]) and
//! open keys ([`Key`]) borrow from it, a key borrows its name, and module strings this code creates
//! ([`Owned`]) are freed on drop — so the borrow checker, not comments, keeps pointers valid.
//!
//! One file per concern: `context` (the call: its flags, replies, effect replication, the getkeys
//! callback, the cluster probe, the clock), `strings` (module strings: borrowed, owned, and the
//! literals made once at load), `keys` (the low-level key API: hash / list / sorted-set operations
//! through the raw `RedisModule_*` functions, no `ctx.call`), `user` (ACL checks of derived keys),
//! `blocking` (a client blocked on a key, and its callbacks) and `registration` (the C entry
//! points, flags, arity, key specs, ACL categories, the module's options). Nothing here names the layers above: the
//! command layer hands over its dispatcher as a [`Dispatch`] type when it builds the entry points,
//! and what a blocked client runs as closures given to [`Ctx::block_on_key`].

// `api!` reads a `static mut` function pointer (unsafe) and is also used inside unsafe blocks.
#![allow(unused_unsafe)]

macro_rules! api {
    ($name:ident) => {
        // Every function used here exists on Valkey 8.0; a missing one is a load-time bug.
        unsafe { valkey_module::raw::$name.expect(stringify!($name)) }
    };
}

mod blocking;
mod context;
mod keys;
mod registration;
mod strings;
mod user;

pub use context::{now_ms, Ctx};
pub use keys::{Again, Key, Kind, StreamId, Trim};
pub use registration::{declare_module_options, entry, register, Dispatch, Entry, Registration};
pub use strings::{Literal, Owned, Str};
pub use user::User;
