/**
 * Backend selection: the native module's `EMQ.*` commands, or the Lua twin (function libraries
 * through FCALL, or scripts through EVALSHA where functions are refused).
 * Both take the same {@link WireCall}s and give the same replies; server refusals become
 * {@link WireError}s. `auto` picks the module when every primary has it. A call refused with a
 * redirection that guarantees it did not run (a resharding, a failover) is sent again.
 *
 * @module
 */
import { type Decoder, type GlideReturnType, type GlideString, Script } from "@valkey/valkey-glide";
import { slot } from "../keyspace/mod.ts";
import { type Library, luaLibrary, SCRIPTS } from "../lua/mod.ts";
import { type Verb, WIRE, type WireCall } from "../wire/mod.ts";
import { type BackendChoice, type Connection, retryable, retryDelay } from "./connection.ts";
import { BackendError, isNoScript, serverText, wireError } from "./errors.ts";

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
  /**
   * Scripts only: `before` (commands of the call's queue, e.g. a blocking `BZPOPMIN`) then the
   * call, in one pipeline on this connection — the call runs on the server as soon as they have,
   * without a round trip between. Each command's reply (an error in its place), then the call's
   * reply; a refusal of the call is thrown as {@link Backend.call} throws it. `extraMs` lengthens
   * the request timeout (a command that blocks).
   */
  callAfter?(before: GlideString[][], c: WireCall, extraMs: number, decoder?: Decoder): Promise<AfterReply>;
  /** The same backend on another connection (a dedicated one, for blocking calls). */
  on(conn: Connection): Backend;
  /** Frees what the backend holds (script handles). */
  close(): void;
}

/** {@link Backend.callAfter}'s replies: the commands sent first, then the call. */
export interface AfterReply {
  /** Each command's reply, or its error, in order. */
  readonly before: Array<GlideReturnType | Error>;
  /** The call's reply. */
  readonly reply: GlideReturnType;
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

/** The Lua twin's knowledge of the server, shared by a client's backends: functions or scripts, and what is loaded. */
interface LuaState {
  /** True while the verbs go as function libraries. */
  functions: boolean;
  /** Set when this user may not load functions: a missing library then means scripts. */
  cannotLoad: boolean;
  /** `function:<verb>` loaded on every primary; `script:<verb>@<slot>` loaded on a slot's node. */
  readonly loaded: Set<string>;
}

/** A server's answer to an FCALL of a library it has not loaded (never loaded, flushed, or a node new to the cluster). */
const NO_FUNCTION = /^ERR Function not found/;

/** True when `e` refuses functions themselves to this user or server (no FUNCTION or FCALL), not a call. */
function refusesFunctions(e: unknown): boolean {
  const text = serverText(e) ?? "";
  return /'(function|fcall)[|' ]/i.test(text) || /unknown command .?(function|fcall)/i.test(text);
}

/**
 * EchoMQ's function libraries (`emq_*`) that every primary holds with the very code given
 * (`FUNCTION LIST … WITHCODE`: a library of EchoMQ's name holding other code is loaded over), by
 * name; none when the server or the user's ACL refuses the listing (every library is then loaded).
 */
async function librariesOnEveryPrimary(conn: Connection, code: ReadonlyMap<string, string>): Promise<Set<string>> {
  let replies: GlideReturnType[];
  try {
    replies = await conn.everyPrimary(["FUNCTION", "LIST", "LIBRARYNAME", "emq_*", "WITHCODE"]);
  } catch {
    return new Set();
  }
  const perNode = replies.map(listedLibraries);
  return new Set([...code].filter(([name, text]) => perNode.every((node) => node.get(name) === text)).map(([name]) => name));
}

/** A `FUNCTION LIST … WITHCODE` reply as name → code, whatever shape glide gives its maps (objects, or `{ key, value }` lists). */
function listedLibraries(reply: unknown): Map<string, string> {
  const record = (x: unknown): Record<string, unknown> =>
    Array.isArray(x) && x.every((e) => e !== null && typeof e === "object" && "key" in e && "value" in e)
      ? Object.fromEntries((x as Array<{ key: unknown; value: unknown }>).map((e) => [String(e.key), e.value]))
      : (x !== null && typeof x === "object" ? x as Record<string, unknown> : {});
  const out = new Map<string, string>();
  for (const entry of Array.isArray(reply) ? reply : []) {
    const r = record(entry);
    if (r.library_name !== undefined && r.library_code !== undefined) out.set(String(r.library_name), String(r.library_code));
  }
  return out;
}

/**
 * The Lua twin. Each verb's Lua goes as a function library (`FUNCTION LOAD REPLACE` on every
 * primary at connect, unless every primary lists it with the same code already, then `FCALL`: its
 * shared definitions made once, not at every call — see `lib/lua/library.ts`). Every primary, so that a slot's migration target has it
 * before the slot moves; REPLACE, so that a load is the same on every node whatever was there (the
 * name carries a hash of the code: another release's libraries stand beside these). Where the
 * user may not load functions, the libraries an operator's client loaded are called; where FCALL
 * is refused or finds no library it cannot load, the same Lua goes as a script (EVALSHA, EVAL on
 * NOSCRIPT) from then on.
 */
export class ScriptBackend implements Backend {
  /** Always `scripts`. */
  readonly kind: "scripts" = "scripts";
  readonly #conn: Connection;
  readonly #scripts: Map<Verb, Script> = new Map();
  readonly #libraries: Map<Verb, Library> = new Map();
  /** What the server holds, shared by this client's backends (its dedicated lines' too). */
  readonly #state: LuaState;

  /** A backend sending on `conn`; `state` is another backend's of the same client, when given. */
  constructor(conn: Connection, state: LuaState = { functions: true, cannotLoad: false, loaded: new Set() }) {
    this.#conn = conn;
    this.#state = state;
    for (const [verb, source] of Object.entries(SCRIPTS) as Array<[Verb, string]>) {
      this.#scripts.set(verb, new Script(source));
    }
  }

  /**
   * A backend on `conn` with every verb's library loaded on every primary: a call then goes at
   * once, without a load before it (a worker's first CLAIM is on the wire when `claim` returns).
   */
  static async open(conn: Connection): Promise<ScriptBackend> {
    const b = new ScriptBackend(conn);
    // a library every primary holds already with this code (another client of this release
    // loaded it) is not loaded again: no compiling, no write to replicate
    const verbs = Object.keys(SCRIPTS) as Verb[];
    const held = await librariesOnEveryPrimary(conn, new Map(verbs.map((v) => [b.#library(v).name, b.#library(v).code])));
    for (const verb of verbs) {
      if (held.has(b.#library(verb).name)) b.#state.loaded.add(`function:${verb}`);
    }
    await Promise.all((Object.keys(SCRIPTS) as Verb[]).map((verb) => b.#load([verb], null, false)));
    return b;
  }

  get #functions(): boolean {
    return this.#state.functions;
  }

  /** How the verbs go now: as function libraries (`FCALL`) or as scripts (`EVALSHA`). */
  get form(): "functions" | "scripts" {
    return this.#functions ? "functions" : "scripts";
  }

  #script(verb: Verb): Script {
    const s = this.#scripts.get(verb);
    if (!s) throw new BackendError("the script backend is closed");
    return s;
  }

  #library(verb: Verb): Library {
    let lib = this.#libraries.get(verb);
    if (lib === undefined) this.#libraries.set(verb, lib = luaLibrary(verb, SCRIPTS[verb]));
    return lib;
  }

  #argv(c: WireCall): GlideString[] {
    return this.#functions
      ? ["FCALL", this.#library(c.verb).name, String(c.keys.length), ...c.keys, ...c.args]
      : ["EVALSHA", this.#script(c.verb).getHash(), String(c.keys.length), ...c.keys, ...c.args];
  }

  /** Scripts from now on when `e` (a call's error) says functions cannot serve this user; true then. */
  #fallBack(e: unknown): boolean {
    if (!this.#functions) return false;
    if (refusesFunctions(e) || (this.#state.cannotLoad && NO_FUNCTION.test(serverText(e) ?? ""))) this.#state.functions = false;
    return !this.#functions;
  }

  /** {@inheritDoc Backend.call} */
  async call(c: WireCall, decoder?: Decoder): Promise<GlideReturnType> {
    const route = c.keys[0]!;
    try {
      if (!this.#state.loaded.has(`function:${c.verb}`)) await this.#load([c.verb], route, false);
      if (!this.#functions) return await this.#conn.script(this.#script(c.verb), c.keys, c.args, decoder);
      try {
        return await this.#conn.command(this.#argv(c), route, decoder);
      } catch (e) {
        if (this.#state.cannotLoad || !NO_FUNCTION.test(serverText(e) ?? "")) throw e;
        await this.#load([c.verb], route, true); // then once more: a missing library is not a refusal
        return await this.#conn.command(this.#argv(c), route, decoder);
      }
    } catch (e) {
      if (this.#fallBack(e)) return await this.call(c, decoder);
      throw wireError(`EMQ.${c.verb}`, e);
    }
  }

  /** {@inheritDoc Backend.callAfter} */
  async callAfter(before: GlideString[][], c: WireCall, extraMs: number, decoder?: Decoder): Promise<AfterReply> {
    const route = c.keys[0]!;
    if (!this.#state.loaded.has(`function:${c.verb}`)) await this.#load([c.verb], route, false);
    // as scripts, EVALSHA's fallback to the script's text is the call's own: the call after
    if (!this.#functions) return { before: await this.#conn.batch(before, route, false, extraMs, decoder), reply: await this.call(c, decoder) };
    const replies = await this.#conn.batch([...before, this.#argv(c)], route, false, extraMs, decoder);
    const reply = replies.pop()!;
    if (!(reply instanceof Error)) return { before: replies, reply };
    // a library missing (a flushed or restarted node), functions refused, or a redirection: the
    // call did not run — once more alone, as a call is sent
    if (NO_FUNCTION.test(serverText(reply) ?? "") || refusesFunctions(reply) || retryable(reply)) {
      return { before: replies, reply: await this.call(c, decoder) };
    }
    throw wireError(`EMQ.${c.verb}`, reply);
  }

  /**
   * Loads the libraries of `verbs` on every primary (once per verb unless `force`), or, as
   * scripts, the scripts on the node of `route` (once per slot unless `force`). A user refused
   * FUNCTION LOAD is noted (`cannotLoad`), not an error; a full server's refusal turns the
   * backend to scripts.
   */
  async #load(verbs: Iterable<Verb>, route: string | null, force: boolean): Promise<void> {
    for (const verb of new Set(verbs)) {
      if (this.#functions) {
        if (this.#state.cannotLoad || (!force && this.#state.loaded.has(`function:${verb}`))) continue;
        try {
          await this.#conn.everyPrimary(["FUNCTION", "LOAD", "REPLACE", this.#library(verb).code]);
          this.#state.loaded.add(`function:${verb}`);
          continue;
        } catch (e) {
          if (refusesFunctions(e)) {
            this.#state.cannotLoad = true;
            continue;
          }
          // FUNCTION LOAD is a write a full server (maxmemory) refuses, where SCRIPT LOAD is not:
          // a worker draining a full server goes on as scripts
          if (!/^OOM /.test(serverText(e) ?? "")) throw e;
          this.#state.functions = false;
        }
      }
      if (route === null) continue; // at connect: a script is loaded where a call first needs it
      const at = `script:${verb}@${slot(route)}`;
      if (!force && this.#state.loaded.has(at)) continue;
      await this.#conn.command(["SCRIPT", "LOAD", SCRIPTS[verb]], route);
      this.#state.loaded.add(at);
    }
  }

  /** {@inheritDoc Backend.callMany} — FCALL (or EVALSHA) in a batch; a missing library or script is loaded and its calls resent. */
  async callMany(calls: WireCall[], wait?: WaitFor, decoder?: Decoder): Promise<Array<GlideReturnType | Error>> {
    if (calls.length === 0) return [];
    const route = calls[0]!.keys[0]!;
    // Load first: a library or script missing inside a batch would send those calls again after
    // the others and so reorder them.
    await this.#load(calls.map((c) => c.verb), route, false);
    const extraMs = wait?.timeoutMs ?? 0;
    const form = this.form;
    const missing = (r: GlideReturnType | Error): boolean => r instanceof Error && (isNoScript(r) || NO_FUNCTION.test(serverText(r) ?? ""));
    const replies = await sendAll(
      this.#conn,
      calls.map((c) => this.#argv(c)),
      wait,
      (commands) => this.#conn.batch(commands, route, false, extraMs, decoder),
      (r) => (missing(r) && !this.#state.cannotLoad) || (r instanceof Error && retryable(r)),
      (redo) => this.#load(redo.map((i) => calls[i]!.verb), route, true),
    );
    // every call refused as a function (none ran): the whole batch again as scripts, in order
    const refused = (r: GlideReturnType | Error | undefined): boolean => r instanceof Error && this.#fallBack(r);
    if (form === "functions" && replies.slice(0, calls.length).every(refused)) {
      return await this.callMany(calls, wait, decoder);
    }
    return replies.map((r, i) => (r instanceof Error && i < calls.length ? asError(`EMQ.${calls[i]!.verb}`, r) : r));
  }

  /** {@inheritDoc Backend.on} */
  on(conn: Connection): Backend {
    return new ScriptBackend(conn, this.#state);
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
    return await ScriptBackend.open(conn);
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
  return await ScriptBackend.open(conn);
}
