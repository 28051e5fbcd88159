//! EchoMQ wire-4 as a native Valkey module (`emq`). This file only registers: the eight
//! `EMQ.*` commands (with key specs, the getkeys callback and the `emq` ACL category) and the
//! `emq.wire` / `emq.max-payload` configurations. The keyspace mirror is in `keyspace.rs`, the
//! argument gates in `gates.rs`, one handler per verb in `verbs/`.

pub mod command;
pub mod config;
pub mod gates;
pub mod keyspace;
pub mod store;
pub mod verbs;
pub mod wire;

use std::ffi::c_int;

use valkey_module::raw;

/// One C entry point per verb, each handing argv to the shared dispatcher.
macro_rules! entry {
    ($name:ident, $verb:ident) => {
        extern "C" fn $name(
            ctx: *mut raw::RedisModuleCtx,
            argv: *mut *mut raw::RedisModuleString,
            argc: c_int,
        ) -> c_int {
            command::dispatch(ctx, argv, argc, &verbs::$verb::VERB, verbs::$verb::run)
        }
    };
}

entry!(emq_enqueue, enqueue);
entry!(emq_schedule, schedule);
entry!(emq_promote, promote);
entry!(emq_claim, claim);
entry!(emq_ack, ack);
entry!(emq_retry, retry);
entry!(emq_bury, bury);
entry!(emq_reap, reap);

type Entry =
    extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int;

/// Every verb with its entry point, in wire order.
const VERBS: [(&wire::Verb, Entry); 8] = [
    (&verbs::enqueue::VERB, emq_enqueue),
    (&verbs::schedule::VERB, emq_schedule),
    (&verbs::promote::VERB, emq_promote),
    (&verbs::claim::VERB, emq_claim),
    (&verbs::ack::VERB, emq_ack),
    (&verbs::retry::VERB, emq_retry),
    (&verbs::bury::VERB, emq_bury),
    (&verbs::reap::VERB, emq_reap),
];

#[cfg(not(test))]
mod module {
    use super::{config, store, VERBS};
    use valkey_module::alloc::ValkeyAlloc;
    use valkey_module::configuration::ConfigurationFlags;
    use valkey_module::{valkey_module, Context, Status, ValkeyString};

    fn init(ctx: &Context, _args: &[ValkeyString]) -> Status {
        store::init_literals();
        for (verb, entry) in VERBS {
            if let Err(e) = super::command::register(ctx.ctx, verb, entry) {
                ctx.log_warning(&format!("emq: {e}"));
                return Status::Err;
            }
        }
        Status::Ok
    }

    valkey_module! {
        name: "emq",
        version: 1,
        allocator: (ValkeyAlloc, ValkeyAlloc),
        data_types: [],
        init: init,
        acl_categories: [
            "emq",
        ]
        commands: [],
        configurations: [
            i64: [
                ["wire", &config::WIRE, config::WIRE_DEFAULT, 0, 1_000_000, ConfigurationFlags::DEFAULT, None],
                ["max-payload", &config::MAX_PAYLOAD, config::MAX_PAYLOAD_DEFAULT, 0, 536_870_912, ConfigurationFlags::DEFAULT, None],
            ],
            string: [],
            bool: [],
            enum: [],
            module_args_as_configuration: true,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::VERBS;

    #[test]
    fn verb_table_is_consistent() {
        let mut seen = std::collections::HashSet::new();
        let mut entries = std::collections::HashSet::new();
        for (verb, entry) in VERBS {
            assert!(
                entries.insert(entry as usize),
                "shared entry point for {}",
                verb.name
            );
            assert!(seen.insert(verb.name), "duplicate {}", verb.name);
            assert_eq!(format!("{}\0", verb.name.to_lowercase()), verb.command);
            assert_eq!(verb.numkeys, verb.keys.to_string().as_bytes());
            assert!(verb.keys >= 2 && verb.args >= 1);
        }
        assert_eq!(seen.len(), 8);
    }
}
