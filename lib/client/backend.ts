/**
 * Backend selection: the native module's `EMQ.*` commands, or the Lua twin through EVALSHA.
 * Both take the same {@link WireCall}s and give the same replies; server refusals become
 * {@link WireError}s. `auto` picks the module when every primary has it. A call refused with a
 * redirection that guarantees it did not run (a resharding, a failover) is sent again.
 *
 * @module
 */
import { type Decoder, type GlideReturnType, type GlideString, Script } from "@valkey/valkey-glide";
import { slot } from "../keyspace/mod.ts";
import { SCRIPTS } from "../lua/mod.ts";
import { type Verb, WIRE, type WireCall } from "../wire/mod.ts";
import { type BackendChoice, type Connection, retryable, retryDelay } from "./connection.ts";
import { BackendError, isNoScript, wireError } from "./errors.ts";

/** The implementation behind the verbs. */
export interface Backend {
  /** Which one this is. */
  readonly kind: "module" | "scripts";
  /** Sends one call; a server refusal is thrown as a {@link WireError}. */
  call(call: WireCall, decoder?: Decoder): Promise<GlideReturnType>;
  /**
   * Sends calls of one queue in one non-atomic batch to the queue's primary: a reply or an error
   * (a {@link WireError} for a refusal) per call, in order. With `wait`, the batch ends with
   * `WAIT <replicas> <timeoutMs>` on the same connection, and its reply (the number of replicas
   * that acknowledged every write before it) or error is one more element, last. `decoder`
   * decodes every reply (`Decoder.Bytes` keeps claimed payloads as bytes).
   */
  callMany(calls: WireCall[], wait?: WaitFor, decoder?: Decoder): Promise<Array<GlideReturnType | Error>>;
  /** The same backend on another connection (a dedicated one, for blocking calls). */
  on(conn: Connection): Backend;
  /** Frees what the backend holds (script handles). */
  close(): void;
}

/** A `WAIT` ending a batch: how many replicas must acknowledge, and for how long to block. */
export interface WaitFor {
  /** Replicas that must acknowledge the batch's writes (≥ 1). */
  readonly replicas: number;
  /** Milliseconds `WAIT` blocks at most (≥ 1; `WAIT … 0` would block forever). */
  readonly timeoutMs: number;
}

function waitArgs(wait: WaitFor | undefined): GlideString[][] {
  return wait === undefined ? [] : [["WAIT", String(wait.replicas), String(wait.timeoutMs)]];
}

function asError(verb: string, e: unknown): Error {
  const mapped = wireError(verb, e);
  return mapped instanceof Error ? mapped : new Error(String(mapped));
}

/**
 * Sends `calls` (each an argv) and a trailing `WAIT`, if any, through `send`, then sends again, in
 * order, the calls that came back with `again(reply)` true — each time with the `WAIT` last, so it
 * covers every write — until none does or the connection's retry window closes. `before` runs
 * before each resend (e.g. loading scripts).
 */
async function sendAll(
  conn: Connection,
  argv: GlideString[][],
  wait: WaitFor | undefined,
  send: (commands: GlideString[][]) => Promise<Array<GlideReturnType | Error>>,
  again: (reply: GlideReturnType | Error) => boolean,
  before: (indexes: number[]) => Promise<void> = async () => {},
): Promise<Array<GlideReturnType | Error>> {
  const out = await send([...argv, ...waitArgs(wait)]);
  const until = Date.now() + conn.retryWindowMs;
  for (let attempt = 0;; attempt++) {
    if (attempt > 0) await new Promise((wake) => setTimeout(wake, retryDelay(attempt)));
    const redo = argv.flatMap((_, i) => (again(out[i]!) ? [i] : []));
    if (redo.length === 0 || Date.now() > until) return out;
    await before(redo);
    const more = await send([...redo.map((i) => argv[i]!), ...waitArgs(wait)]);
    redo.forEach((i, j) => (out[i] = more[j]!));
    if (wait !== undefined) out[argv.length] = more[redo.length]!;
  }
}

/** The native module: `EMQ.<VERB> 1 <meta> <args…>`, routed by its key. */
export class ModuleBackend implements Backend {
  /** Always `module`. */
  readonly kind: "module" = "module";
  readonly #conn: Connection;

  /** A backend sending on `conn`. */
  constructor(conn: Connection) {
    this.#conn = conn;
  }

  #argv(c: WireCall): GlideString[] {
    return [`EMQ.${c.verb}`, String(c.keys.length), ...c.keys, ...c.args];
  }

  /** {@inheritDoc Backend.call} */
  async call(c: WireCall, decoder?: Decoder): Promise<GlideReturnType> {
    try {
      return await this.#conn.command(this.#argv(c), c.keys[0]!, decoder);
    } catch (e) {
      throw wireError(`EMQ.${c.verb}`, e);
    }
  }

  /** {@inheritDoc Backend.callMany} */
  async callMany(calls: WireCall[], wait?: WaitFor, decoder?: Decoder): Promise<Array<GlideReturnType | Error>> {
    if (calls.length === 0) return [];
    const route = calls[0]!.keys[0]!;
    const extraMs = wait?.timeoutMs ?? 0;
    const replies = await sendAll(
      this.#conn,
      calls.map((c) => this.#argv(c)),
      wait,
      (commands) => this.#conn.batch(commands, route, false, extraMs, decoder),
      (r) => r instanceof Error && retryable(r),
    );
    return replies.map((r, i) => (r instanceof Error && i < calls.length ? asError(`EMQ.${calls[i]!.verb}`, r) : r));
  }

  /** {@inheritDoc Backend.on} */
  on(conn: Connection): Backend {
    return new ModuleBackend(conn);
  }

  /** Nothing to free. */
  close(): void {}
}

/** The Lua twin: one glide `Script` per verb (EVALSHA, EVAL on NOSCRIPT). */
export class ScriptBackend implements Backend {
  /** Always `scripts`. */
  readonly kind: "scripts" = "scripts";
  readonly #conn: Connection;
  readonly #scripts: Map<Verb, Script> = new Map();
  readonly #loaded: Set<string> = new Set();

  /** A backend sending on `conn`. */
  constructor(conn: Connection) {
    this.#conn = conn;
    for (const [verb, source] of Object.entries(SCRIPTS) as Array<[Verb, string]>) {
      this.#scripts.set(verb, new Script(source));
    }
  }

  #script(verb: Verb): Script {
    const s = this.#scripts.get(verb);
    if (!s) throw new BackendError("the script backend is closed");
    return s;
  }

  /** {@inheritDoc Backend.call} */
  async call(c: WireCall, decoder?: Decoder): Promise<GlideReturnType> {
    try {
      return await this.#conn.script(this.#script(c.verb), c.keys, c.args, decoder);
    } catch (e) {
      throw wireError(`EMQ.${c.verb}`, e);
    }
  }

  /** Loads the scripts of `verbs` on the node of `route` (once per slot unless `force`). */
  async #load(verbs: Iterable<Verb>, route: string, force: boolean): Promise<void> {
    const at = `${slot(route)}`;
    for (const verb of new Set(verbs)) {
      if (!force && this.#loaded.has(`${verb}@${at}`)) continue;
      await this.#conn.command(["SCRIPT", "LOAD", SCRIPTS[verb]], route);
      this.#loaded.add(`${verb}@${at}`);
    }
  }

  /** {@inheritDoc Backend.callMany} — EVALSHA in a batch; NOSCRIPT loads the script and resends. */
  async callMany(calls: WireCall[], wait?: WaitFor, decoder?: Decoder): Promise<Array<GlideReturnType | Error>> {
    if (calls.length === 0) return [];
    const route = calls[0]!.keys[0]!;
    const argv = (c: WireCall): GlideString[] => [
      "EVALSHA",
      this.#script(c.verb).getHash(),
      String(c.keys.length),
      ...c.keys,
      ...c.args,
    ];
    // Load the scripts on the route's node first, once per slot: a NOSCRIPT inside a batch would
    // send those calls again after the others and so reorder them.
    await this.#load(calls.map((c) => c.verb), route, false);
    const extraMs = wait?.timeoutMs ?? 0;
    const replies = await sendAll(
      this.#conn,
      calls.map(argv),
      wait,
      (commands) => this.#conn.batch(commands, route, false, extraMs, decoder),
      (r) => r instanceof Error && (isNoScript(r) || retryable(r)),
      (redo) => this.#load(redo.map((i) => calls[i]!.verb), route, true),
    );
    return replies.map((r, i) => (r instanceof Error && i < calls.length ? asError(`EMQ.${calls[i]!.verb}`, r) : r));
  }

  /** {@inheritDoc Backend.on} */
  on(conn: Connection): Backend {
    return new ScriptBackend(conn);
  }

  /** Releases the script handles. */
  close(): void {
    for (const s of this.#scripts.values()) s.release();
    this.#scripts.clear();
  }
}

/** True when every primary answers `COMMAND INFO emq.enqueue` (or lists a module named emq). */
export async function moduleLoaded(conn: Connection): Promise<boolean> {
  try {
    const replies = await conn.everyPrimary(["COMMAND", "INFO", "emq.enqueue"]);
    return replies.length > 0 && replies.every((r) => Array.isArray(r) && r.length > 0 && r[0] !== null);
  } catch {
    try {
      const replies = await conn.everyPrimary(["MODULE", "LIST"]);
      return replies.length > 0 && replies.every((r) => JSON.stringify(r).toLowerCase().includes('"emq"'));
    } catch {
      return false;
    }
  }
}

/**
 * The wires the primaries' emq modules speak, from the summary each registers with its commands
 * (`COMMAND DOCS emq.enqueue`: "EchoMQ wire-12 EMQ.ENQUEUE"); empty when that cannot be read (a
 * user the ACL denies `COMMAND DOCS`): then nothing is compared.
 */
export async function moduleWires(conn: Connection): Promise<number[]> {
  let replies: unknown[];
  try {
    replies = await conn.everyPrimary(["COMMAND", "DOCS", "emq.enqueue"]);
  } catch {
    return [];
  }
  const wires = new Set<number>();
  for (const r of replies) {
    const m = /EchoMQ wire-(\d+) /.exec(JSON.stringify(r, (_, v) => (v instanceof Uint8Array ? new TextDecoder().decode(v) : v)));
    if (m) wires.add(Number(m[1]));
  }
  return [...wires].sort((a, b) => a - b);
}

/**
 * Refuses a module of another release: its verbs would read this client's calls by another wire
 * (another layout, other replies). The fence (`emq.wire`, `{emq}:version`) guards the data; this
 * names the mismatch once, at connect, with both wires.
 */
async function assertModuleWire(conn: Connection, choice: BackendChoice): Promise<void> {
  const other = (await moduleWires(conn)).filter((w) => w !== WIRE);
  if (other.length === 0) return;
  throw new BackendError(
    `backend ${JSON.stringify(choice)}: the server's emq module speaks wire ${other.join(", ")}, this client wire ${WIRE}; ` +
      "load the module of this client's release (npx emq module path prints its file)",
  );
}

/** What a server without its Lua engine answers `SCRIPT LOAD` and `EVAL` (Valkey ≥ 9.1). */
const NO_LUA = /Could not find scripting engine 'lua'/;

/**
 * Refuses the script backend on a server that runs no Lua: Valkey 9.1 made Lua a module an operator
 * can leave out or unload, and then every EVALSHA would fail. Asked once per primary with
 * `SCRIPT LOAD` of a one-line script (what the backend's users may run); any other answer — a
 * user the ACL denies it, say — is left to the calls themselves.
 */
async function assertLua(conn: Connection, choice: BackendChoice): Promise<void> {
  let replies: unknown[];
  try {
    replies = await conn.everyPrimary(["SCRIPT", "LOAD", "return 1"]);
  } catch (e) {
    replies = [e];
  }
  const refused = replies.find((r) => r instanceof Error && NO_LUA.test(r.message) || typeof r === "string" && NO_LUA.test(r));
  if (refused === undefined) return;
  throw new BackendError(
    `backend ${JSON.stringify(choice)}: the server runs no Lua (SCRIPT LOAD answers "ERR Could not find scripting engine 'lua'": ` +
      "Valkey 9.1 makes Lua a module an operator may leave out) and " +
      (choice === "auto" ? "has no emq module" : "the scripts need it") +
      '; load the emq module (native/) and use backend "module" or "auto"',
  );
}

/**
 * Picks the backend for `choice`; `module` without the module loaded, or the scripts on a server
 * without Lua, is a {@link BackendError}.
 */
export async function selectBackend(conn: Connection, choice: BackendChoice): Promise<Backend> {
  if (choice === "scripts") {
    await assertLua(conn, choice);
    return new ScriptBackend(conn);
  }
  const loaded = await moduleLoaded(conn);
  if (choice === "module") {
    if (!loaded) {
      throw new BackendError(
        'backend "module" requested, but the server does not have the emq module ' +
          '(COMMAND INFO emq.enqueue is empty on at least one primary); use backend "scripts" or "auto"',
      );
    }
    await assertModuleWire(conn, choice);
    return new ModuleBackend(conn);
  }
  if (choice !== "auto") throw new BackendError(`unknown backend ${JSON.stringify(choice)}: module, scripts or auto`);
  if (loaded) {
    await assertModuleWire(conn, choice);
    return new ModuleBackend(conn);
  }
  await assertLua(conn, choice);
  return new ScriptBackend(conn);
}
