//! The EchoMQ wire (the current one: `spec::WIRE`, from `WIRE` in `lib/wire/verbs.ts`) as a native
//! Valkey module (`emq`). This file only registers: one command per verb
//! of `table::VERBS` (with key specs, the getkeys callback and the `emq` ACL category) and the
//! `emq.wire` / `emq.max-payload` configurations. The layers, from the server up: `ffi/` (the C
//! API, every `unsafe` of the crate, naming nothing above it); the pure `keyspace` mirror, argument
//! `gates` and the wire's types (`wire`); the data generated from `lib/wire` by `tools/gen_wire.ts`:
//! `spec` (the wire's constants, every verb's call shape, the names the verbs store) and `refusal`
//! (every refusal with its text), naming nothing above the wire's types; `literals` (those names,
//! made once at load); the dispatcher running steps 1–4 for every verb (`command`); one handler per
//! verb (steps 5–6) in `verbs/`; and at the top `table`, also generated: the verb → handler table
//! with its C entry points.

pub mod command;
pub mod config;
pub mod ffi;
pub mod gates;
pub mod keyspace;
pub mod literals;
pub mod options;
#[rustfmt::skip]
pub mod refusal;
#[rustfmt::skip]
pub mod spec;
#[rustfmt::skip]
pub mod table;
pub mod verbs;
pub mod wire;

#[cfg(not(test))]
mod module {
    use super::{config, ffi, literals, spec, table};
    use valkey_module::alloc::ValkeyAlloc;
    use valkey_module::configuration::ConfigurationFlags;
    use valkey_module::{valkey_module, Context, Status, ValkeyString};

    fn init(ctx: &Context, _args: &[ValkeyString]) -> Status {
        literals::init();
        ffi::declare_module_options(ctx);
        for command in &table::VERBS {
            let verb = &command.verb;
            let registration = ffi::Registration {
                command: verb.command,
                // Admissions are refused under maxmemory; settles, claims and moves drain memory.
                flags: if verb.admits {
                    "write deny-oom getkeys-api"
                } else {
                    "write getkeys-api"
                },
                notes: "the queue's meta, the one declared key",
                summary: &format!("EchoMQ wire-{} {}", spec::WIRE, verb.name),
                categories: "emq write",
            };
            if let Err(e) = ffi::register(ctx, &registration, command.entry) {
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
    use super::spec::verb::ALL;
    use super::table::VERBS;

    /// The table holds every verb of the spec once, in wire order (a verb's entry point is its place
    /// there), each with its own entry point.
    #[test]
    fn one_entry_per_verb() {
        let names: Vec<&str> = VERBS.iter().map(|c| c.verb.name).collect();
        let spec: Vec<&str> = ALL.iter().map(|v| v.name).collect();
        assert_eq!(names, spec);
        let entries: std::collections::HashSet<usize> =
            VERBS.iter().map(|c| c.entry as usize).collect();
        assert_eq!(
            entries.len(),
            VERBS.len(),
            "every verb has its own entry point"
        );
    }
}
