//! EchoMQ wire-5 as a native Valkey module (`emq`). This file only registers: one command per verb
//! of `verbs::VERBS` (with key specs, the getkeys callback and the `emq` ACL category) and the
//! `emq.wire` / `emq.max-payload` configurations. The C API is behind `ffi` (every `unsafe` of
//! the crate), the dispatcher running steps 1–4 for every verb in `command`, the keyspace mirror
//! in `keyspace`, the argument gates in `gates`, the wire's shapes and texts in `wire`, and one
//! handler per verb (steps 5–6) in `verbs/`.

pub mod command;
pub mod config;
pub mod ffi;
pub mod gates;
pub mod keyspace;
pub mod verbs;
pub mod wire;

/// The C entry point of each verb, by its index in `verbs::VERBS`.
const ENTRIES: [ffi::Entry; verbs::VERBS.len()] = [
    ffi::entry::<0>,
    ffi::entry::<1>,
    ffi::entry::<2>,
    ffi::entry::<3>,
    ffi::entry::<4>,
    ffi::entry::<5>,
    ffi::entry::<6>,
    ffi::entry::<7>,
    ffi::entry::<8>,
    ffi::entry::<9>,
    ffi::entry::<10>,
    ffi::entry::<11>,
    ffi::entry::<12>,
    ffi::entry::<13>,
    ffi::entry::<14>,
    ffi::entry::<15>,
];

#[cfg(not(test))]
mod module {
    use super::{config, ffi, verbs, ENTRIES};
    use valkey_module::alloc::ValkeyAlloc;
    use valkey_module::configuration::ConfigurationFlags;
    use valkey_module::{valkey_module, Context, Status, ValkeyString};

    fn init(ctx: &Context, _args: &[ValkeyString]) -> Status {
        ffi::init_literals();
        for ((verb, _), entry) in verbs::VERBS.iter().zip(ENTRIES) {
            let registration = ffi::Registration {
                command: verb.command,
                // Admissions are refused under maxmemory; settles, claims and moves drain memory.
                flags: if verb.admits {
                    "write deny-oom getkeys-api"
                } else {
                    "write getkeys-api"
                },
                notes: "the queue's meta, the one declared key",
                summary: &format!("EchoMQ wire-5 {}", verb.name),
                categories: "emq write",
            };
            if let Err(e) = ffi::register(ctx, &registration, entry) {
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
    use super::{verbs::VERBS, ENTRIES};

    #[test]
    fn one_entry_per_verb() {
        let mut seen = std::collections::HashSet::new();
        for (verb, _) in VERBS {
            assert!(seen.insert(verb.name), "duplicate {}", verb.name);
        }
        let entries: std::collections::HashSet<usize> =
            ENTRIES.iter().map(|e| *e as usize).collect();
        assert_eq!(
            entries.len(),
            VERBS.len(),
            "every verb has its own entry point"
        );
    }
}
