/**
 * A verb's script as a Valkey function library (`FUNCTION LOAD`, then `FCALL`): the same Lua, its
 * shared definitions made once when the library loads instead of at every call. A script run by
 * EVALSHA defines every shared function again on each call (a closure each, 60 to 110 of them per
 * verb): measured on Valkey 8.0.1, a CLAIM refused at its first check cost 40 µs as a script
 * against 1.6 µs for `return 1`. As a library only the verb's own steps run per call.
 *
 * What changes between the two forms, and nothing else: `KEYS` and `ARGV` are the callback's
 * arguments (assigned to two library locals the shared functions read), and a library's locals
 * outlive a call, so the shared state a call builds ({@link PER_CALL}) is set afresh at its start.
 * Any other top-level value in the shared Lua must be listed in {@link CONSTANT}: a new one fails
 * here, when the library is built, rather than leaking one call's state into the next.
 *
 * @module
 */
import type { Verb } from "../wire/mod.ts";

/** A function library: its name (also its one function's name) and its code. */
export interface Library {
  /** `emq_<verb>_<hash of the script>`: a new release loads beside the old one, never over it. */
  readonly name: string;
  /** The code `FUNCTION LOAD` takes. */
  readonly code: string;
}

/** Top-level values of the shared Lua a call changes, and the value each call starts from. */
const PER_CALL: Readonly<Record<string, string>> = {
  emq_probing: "{}",
  emq_probed: "{}",
  emq_events_cap: "nil",
  emq_held_known: "{}",
  emq_meta_known: "{}",
  emq_typed: "nil",
  emq_sizes: "nil",
  emq_clock: "nil",
};
/**
 * Top-level values of the shared Lua no call changes (tables filled once, strings), and memos
 * (`emq_bases`: a pure function's results by argument, kept from call to call: no call's state).
 */
const CONSTANT: ReadonlySet<string> = new Set([
  "VERB",
  "emq_refuse",
  "emq_option_gate",
  "emq_retention",
  "EMQ_SKIPLIST",
  "emq_bounds",
  "emq_bases",
  "emq_bases_count",
]);

/** Where a script's own steps start (the generated steps 1–4; see `luaHead`). */
const OWN = "-- steps 1-4 of ";

/** 64 bits of FNV-1a over `text`'s UTF-16 units, in hex: a name, not a security boundary. */
function hash(text: string): string {
  let a = 0x811c9dc5, b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x01000193 ^ 0x5bd1e995) >>> 0;
  }
  return a.toString(16).padStart(8, "0") + b.toString(16).padStart(8, "0");
}

/**
 * The library of `verb` made from its script (`SCRIPTS[verb]`: the shebang, `VERB`, the shared
 * definitions it calls, then its own steps). Throws on a shared top-level value neither
 * {@link PER_CALL} nor {@link CONSTANT}.
 */
export function luaLibrary(verb: Verb, script: string): Library {
  const at = script.indexOf(`\n${OWN}${verb},`);
  if (at < 0 || script.indexOf(`\n${OWN}`, at + 1) >= 0) throw new Error(`${verb}'s script: no single "${OWN}${verb}" line`);
  const [shebang, ...rest] = script.slice(0, at).split("\n");
  const shared = rest.join("\n");
  const own = script.slice(at + 1).trimEnd();
  const flags = /flags=([\w,-]+)/.exec(shebang!)?.[1]?.split(",") ?? [];
  const fresh: string[] = [];
  for (const m of shared.matchAll(/^local\s+([A-Za-z_][\w, ]*?)\s*=\s*(.*)$/gm)) {
    if (m[2]!.startsWith("function")) continue;
    for (const name of m[1]!.split(",").map((n) => n.trim())) {
      if (name in PER_CALL) fresh.push(`${name} = ${PER_CALL[name]}`);
      else if (!CONSTANT.has(name)) throw new Error(`${verb}'s library: shared top-level value ${name} is neither per call nor constant (lib/lua/library.ts)`);
    }
  }
  const name = `emq_${verb.toLowerCase()}_${hash(script)}`;
  const code = [
    `#!lua name=${name}`,
    "local KEYS, ARGV",
    shared,
    `redis.register_function{function_name = '${name}', flags = {${flags.map((f) => `'${f}'`).join(", ")}}, callback = function(keys, args)`,
    "KEYS, ARGV = keys, args",
    ...fresh,
    own,
    "end}",
    "",
  ].join("\n");
  return { name, code };
}
