/**
 * Flows (docs/design/flows.md): a parent job that runs once its children have finished, the
 * children in any queue. `flow` checks the whole tree before any wire, derives each child's id
 * from its parent's id and its place, and sends one FLOW to the parent's queue (children in other
 * queues travel through that queue's outbox: a relay, `relay.ts`, applies them); `children` reads
 * a parent's fan-in state back.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { Decoder } from "@valkey/valkey-glide";
import { assertJobId, type JobId, type Keyspace } from "../keyspace/mod.ts";
import { type GroupArgs, MAX_FLOW_DEPTH, MAX_PAYLOAD_BYTES, ROW, wireCall } from "../wire/mod.ts";
import { byteLength, encodePayload, toWire } from "./codec.ts";
import type { ClientContext } from "./context.ts";
import { EchoMQError } from "./errors.ts";
import { callWaited, type DurableOptions, waitFor } from "./options.ts";
import { fields, jsonOrText } from "./info.ts";
import { jobOptions } from "./options.ts";

/** Most children one `flow` call carries (one FLOW command). */
export const MAX_FLOW_CHILDREN = 1000;

/**
 * What a child's failure (buried: attempts exhausted or unrecoverable) does to its parent: `fail` it
 * at once, with a reason naming the child (the default); `ignore` it (recorded as `failed`, counts as
 * finished); `remove` it (counts as finished, recorded as `removed` without its reason); or
 * `continue`: the parent may run at once with what has finished (the later children still land in
 * `children()`, and never wake it again).
 */
export type OnFailure = "fail" | "ignore" | "remove" | "continue";

/**
 * A flow step's options (a child's, or the parent's): those of `enqueue` that make sense for a job
 * made by a flow. Checked before any wire (an {@link EchoMQError} `options` naming the step, nothing
 * written); the server applies them when it makes the job, as it would for `enqueue`.
 */
export interface FlowStepOptions {
  /**
   * Its lane (absent: the default lane; the name rule): it is ready in that lane, served
   * round-robin with the queue's other lanes. The first job with a lane makes the queue laned.
   */
  readonly lane?: string;
  /** Its priority, 0 (the default, the most urgent) to 2097151, inside its lane. */
  readonly priority?: number;
  /**
   * The most attempts it gets (1 to 1000000): a worker buries it once that many failed, in place of
   * the worker's own `maxAttempts` (a child's burial then acts on its parent under `onFailure`).
   */
  readonly attempts?: number;
  /** Its name (the name rule): what the job is, shown by `getJob`, the dashboard, `job.name`. */
  readonly name?: string;
  /** Its handler's time limit in ms (1 to 86400000), as `enqueue`'s `timeoutMs`. */
  readonly timeoutMs?: number;
}

/** The options a flow step takes (the others of `enqueue`, such as `dedup`, do not apply to one). */
const STEP_OPTIONS: ReadonlySet<string> = new Set(["lane", "priority", "attempts", "name", "timeoutMs"]);

/** One child of a flow. */
export interface FlowChild {
  /** Its queue (any queue, on any primary of a cluster). */
  readonly queue: string;
  /** Its payload (encoded by the client's codec). */
  readonly payload: unknown;
  /** Its options: lane, priority, attempts, name, time limit (default: none). */
  readonly opts?: FlowStepOptions;
  /** What its failure (buried: attempts exhausted or unrecoverable) does to its parent. */
  readonly onFailure?: OnFailure;
  /**
   * Its own children (a nested flow): it then waits for them as its parent waits for it, and runs
   * once they have finished. At most {@link MAX_FLOW_DEPTH} levels under the root, at most
   * {@link MAX_FLOW_CHILDREN} children each, its whole subtree (payloads and ids) at most 1 MiB.
   */
  readonly children?: readonly FlowChild[];
}

/** A flow: a parent and its children. */
export interface FlowSpec<P> {
  /** The parent's queue. */
  readonly queue: string;
  /** The parent's payload. */
  readonly payload: P;
  /**
   * The parent's options (default: none): its lane and priority apply once it becomes ready (its
   * children finished), its attempts, name and time limit when it runs.
   */
  readonly opts?: FlowStepOptions;
  /** The parent's id (default: a new one). */
  readonly id?: string;
  /** Its children, 1 to {@link MAX_FLOW_CHILDREN}. */
  readonly children: readonly FlowChild[];
  /**
   * An open fan-in: more children may come (`addChildren`) until `seal`; the parent runs only once
   * sealed and every child has finished. Default false: these are all its children.
   */
  readonly open?: boolean;
  /**
   * The flow's deadline, in ms from now: a parent still waiting then is buried with the reason
   * `flow deadline passed: <finished> of <children> children finished`, and its children not yet
   * started are cancelled. Enforced by a relay of the parent's queue (a worker with `relay`, or
   * `relay`), within one relay interval. Default: none.
   */
  readonly deadlineMs?: number;
  /**
   * Resolve only once a replica (or `replicas`) has the flow: FLOW is followed by `WAIT` on the
   * parent's primary, as for `EnqueueOptions.durable` (a shortfall rejects with `DurabilityError`
   * naming the parent: the flow was written on the primary and may be lost with it; send it again
   * with the same `id`, which is refused as a duplicate if it landed). Children in other queues are
   * made by a relay: give the relay `durable` too.
   */
  readonly durable?: boolean | DurableOptions;
}

/** Options of `addChildren`. */
export interface AddChildrenOptions {
  /** Resolve only once a replica has the children (ADOPT then `WAIT`): as {@link FlowSpec.durable}. */
  readonly durable?: boolean | DurableOptions;
}

/** A flow's parent, as `addChildren` and `seal` name it (a {@link FlowNode} does). */
export interface FlowParent {
  /** Its queue. */
  readonly queue: string;
  /** Its id. */
  readonly id: string;
}

/** A flow's ids, as made: the parent and its children. */
export interface FlowNode {
  /** The job's id. */
  readonly id: JobId;
  /** Its queue. */
  readonly queue: string;
  /** Its children (none for a child). */
  readonly children: readonly FlowNode[];
}

/**
 * A child as its parent sees it; `R` types its result (a typed parent's handle, `mq.queue<P, R, C>`,
 * gives its children's results as JSON gives them back; `unknown` otherwise).
 */
export interface ChildState<R = unknown> {
  /** Its queue. */
  readonly queue: string;
  /** Its id. */
  readonly id: JobId;
  /** `completed`, `failed`, `removed` (failed under `onFailure: "remove"`), or `unfinished` while it has not finished. */
  readonly state: "completed" | "failed" | "removed" | "unfinished";
  /** Its result (completed, when it returned one and it was kept: see `resultBytes`). */
  readonly result?: R;
  /**
   * The length of its result when that was longer than its parent keeps (64 KiB): read the result
   * with `getJob` on the child's queue while that queue keeps completed jobs.
   */
  readonly resultBytes?: number;
  /** Why it failed. */
  readonly reason?: string;
}

const POLICY: Readonly<Record<OnFailure, number>> = { fail: 0, ignore: 1, remove: 2, continue: 3 };
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** A parent's field naming child i, and the one holding its outcome. */
const CHILD_FIELD = "child:";
const DONE_FIELD = "done:";

function refuse(message: string): EchoMQError {
  return new EchoMQError("flow", `flow: ${message}`);
}

/**
 * The id of child `place` of parent `parent`: `JOB` + the first 64 bits of SHA-256(`<parent>/<place>`)
 * in 11 Base62 digits (62^11 > 2^64). The same parent and place always give the same id, so a flow
 * sent again, or an outbox entry applied twice, makes nothing twice.
 */
export async function childId(parent: string, place: number): Promise<JobId> {
  // (node:crypto's hash: synchronous, where WebCrypto's digest is a promise each — 12 a flow of 12 children)
  const digest = createHash("sha256").update(`${parent}/${place}`).digest();
  // the 64 bits as two 32-bit halves, divided by 62 digit by digit (every step below 2^53: exact)
  let hi = digest.readUInt32BE(0);
  let lo = digest.readUInt32BE(4);
  let out = "";
  for (let i = 0; i < 11; i++) {
    const x = (hi % 62) * 0x1_0000_0000 + lo;
    hi = Math.floor(hi / 62);
    lo = Math.floor(x / 62);
    out = BASE62[x % 62]! + out;
  }
  return `JOB${out}` as JobId;
}

/**
 * A flow step's options as the wire carries them (`enqueue`'s encoding): refused before any wire,
 * with an {@link EchoMQError} (`options`) naming the step `what`, when not {@link FlowStepOptions}.
 */
function stepOptions(what: string, opts: FlowStepOptions | undefined): string {
  if (opts === undefined) return "";
  if (opts === null || typeof opts !== "object") throw new EchoMQError("options", `${what}: opts must be an object`);
  for (const k of Object.keys(opts)) {
    if (!STEP_OPTIONS.has(k)) {
      throw new EchoMQError("options", `${what}: opts.${k} is not an option of a flow step (${[...STEP_OPTIONS].join(", ")})`);
    }
  }
  return jobOptions(what, opts);
}

/** A child as the wire carries it, checked (its own children too). */
interface Checked {
  readonly queue: string;
  readonly policy: number;
  /** Its options text (empty: none). */
  readonly opts: string;
  readonly payload: string | Uint8Array;
  readonly children?: readonly Checked[];
}

/** Added to a child's policy on the wire when its body is its subtree (it has children). */
export const NESTED = 4;

/**
 * `kids` checked before any wire: 1 to {@link MAX_FLOW_CHILDREN}, each a valid child, its own
 * children (level `level` + 1) checked the same way, at most {@link MAX_FLOW_DEPTH} levels deep.
 */
function checkChildren<P>(c: ClientContext<P>, kids: readonly FlowChild[], level = 1, path = ""): Checked[] {
  if (!Array.isArray(kids) || kids.length === 0) throw refuse(`${path === "" ? "a flow" : `child ${path}`} needs at least one child`);
  if (kids.length > MAX_FLOW_CHILDREN) throw refuse(`at most ${MAX_FLOW_CHILDREN} children per call, got ${kids.length}`);
  if (level > MAX_FLOW_DEPTH) throw refuse(`at most ${MAX_FLOW_DEPTH} levels of children under the root`);
  return kids.map((k: FlowChild, i) => {
    const at = path === "" ? `${i}` : `${path}.${i}`;
    if (k === null || typeof k !== "object") throw refuse(`child ${at} must be { queue, payload, opts?, onFailure?, children? }`);
    const queue = c.keyspace(k.queue).name;
    const opts = stepOptions(`flow: child ${at}`, k.opts);
    const onFailure = k.onFailure ?? "fail";
    if (!Object.hasOwn(POLICY, onFailure)) {
      throw refuse(`child ${at}: onFailure must be one of ${Object.keys(POLICY).join(", ")}, got ${JSON.stringify(onFailure)}`);
    }
    const payload = encodePayload(c.codec as ClientContext<unknown>["codec"], k.payload, "flow");
    if (byteLength(payload) > MAX_PAYLOAD_BYTES) throw new EchoMQError("payload", `flow: child ${at}'s payload exceeds ${MAX_PAYLOAD_BYTES} bytes`);
    const policy = POLICY[onFailure];
    if (k.children === undefined) return { queue, policy, opts, payload };
    return { queue, policy, opts, payload, children: checkChildren(c, k.children, level + 1, at) };
  });
}

const text = new TextEncoder();

/** `parts` (text or bytes) as one byte string. */
function concat(parts: ReadonlyArray<string | Uint8Array>): Uint8Array {
  // (no Buffer: the package runs on Deno and in browsers' bundles too)
  const bytes = parts.map((p) => (typeof p === "string" ? text.encode(p) : p));
  const out = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of bytes) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

/**
 * The subtree of child `id` (its payload, then each child's id, queue, policy, options and body,
 * nested): `<n>\0<payload length>\0<payload>` then per child `<id>\0<queue>\0<policy>\0<opts
 * length>\0<opts><length>\0<body>` (lengths in bytes)
 * (docs/WIRE.md, "Flows"); and its node of the returned tree.
 */
async function subtree(id: JobId, k: Checked & { children: readonly Checked[] }): Promise<[Uint8Array, FlowNode[]]> {
  const edges: SubtreeEdge[] = [];
  const nodes: FlowNode[] = [];
  for (const [i, g] of k.children.entries()) {
    const child = await childId(id, i);
    const [body, kids] = g.children === undefined ? [g.payload, []] : await subtree(child, g as Checked & { children: readonly Checked[] });
    const policy = g.children === undefined ? g.policy : g.policy + NESTED;
    edges.push({ id: child, queue: g.queue, policy, opts: g.opts, body });
    nodes.push({ id: child, queue: g.queue, children: kids });
  }
  return [subtreeBody(k.payload, edges), nodes];
}

/**
 * One child in a subtree body: its id, its queue's EchoMQ name, its wire policy (+ 4 when `body` is
 * its own subtree), its options (ENQUEUE's encoding), its body.
 */
export interface SubtreeEdge {
  /** The child's id (given: the caller mints it). */
  readonly id: string;
  /** Its queue (EchoMQ's name). */
  readonly queue: string;
  /** Its policy on the wire: 0 to 3, plus 4 when `body` is its own subtree. */
  readonly policy: number;
  /** Its options as ENQUEUE's `opts` argument encodes them ("" for none). */
  readonly opts: string;
  /** Its payload (a leaf) or its subtree ({@link subtreeBody}). */
  readonly body: string | Uint8Array;
}

/**
 * The body of a child with children (docs/WIRE.md, "Flows"): `<n>\0<payload length>\0<payload>`
 * then per child `<id>\0<queue>\0<policy>\0<opts length>\0<opts><length>\0<body>`. Shared with BullMQ's nested flows,
 * whose ids are BullMQ's (lib/bullmq/flows.ts).
 */
export function subtreeBody(payload: string | Uint8Array, edges: readonly SubtreeEdge[]): Uint8Array {
  const bytes = typeof payload === "string" ? text.encode(payload) : payload;
  const parts: Array<string | Uint8Array> = [`${edges.length}\0${bytes.byteLength}\0`, bytes];
  for (const e of edges) {
    const body = typeof e.body === "string" ? text.encode(e.body) : e.body;
    const opts = text.encode(e.opts);
    parts.push(`${e.id}\0${e.queue}\0${e.policy}\0${opts.byteLength}\0`, opts, `${body.byteLength}\0`, body);
  }
  return concat(parts);
}

/** The wire groups of `checked` children of `parent` at places from `from`, and their nodes. */
async function placed(parent: JobId, from: number, checked: Checked[]): Promise<[Array<GroupArgs<"FLOW">>, FlowNode[]]> {
  const groups: Array<GroupArgs<"FLOW">> = [];
  const nodes: FlowNode[] = [];
  for (const [i, k] of checked.entries()) {
    const id = await childId(parent, from + i);
    if (k.children === undefined) {
      groups.push({ id, queue: k.queue, policy: String(k.policy), opts: k.opts, body: toWire(k.payload) });
      nodes.push({ id, queue: k.queue, children: [] });
      continue;
    }
    const [body, kids] = await subtree(id, k as Checked & { children: readonly Checked[] });
    if (body.byteLength > MAX_PAYLOAD_BYTES) {
      throw new EchoMQError("payload", `flow: child ${from + i}'s subtree exceeds ${MAX_PAYLOAD_BYTES} bytes`);
    }
    groups.push({ id, queue: k.queue, policy: String(k.policy + NESTED), opts: k.opts, body: toWire(body) });
    nodes.push({ id, queue: k.queue, children: kids });
  }
  return [groups, nodes];
}

/** See `EchoMQ.flow`: the tree checked before any wire, then one FLOW on the parent's queue. */
export async function flow<P>(c: ClientContext<P>, spec: FlowSpec<P>): Promise<FlowNode> {
  if (spec === null || typeof spec !== "object") throw refuse("the flow must be { queue, payload, children }");
  const ks = c.keyspace(spec.queue);
  const checked = checkChildren(c, spec.children);
  const parentOpts = stepOptions("flow: the parent", spec.opts);
  if (spec.open !== undefined && typeof spec.open !== "boolean") throw refuse("open must be a boolean");
  const within = spec.deadlineMs ?? 0;
  if (!Number.isSafeInteger(within) || within < 0) throw refuse(`deadlineMs must be a whole number of ms ≥ 0, got ${String(within)}`);
  const payload = encodePayload(c.codec, spec.payload, "flow");
  if (byteLength(payload) > MAX_PAYLOAD_BYTES) throw new EchoMQError("payload", `flow: the parent's payload exceeds ${MAX_PAYLOAD_BYTES} bytes`);
  let parent: JobId;
  if (spec.id === undefined) parent = c.id();
  else {
    assertJobId(spec.id);
    parent = spec.id as JobId;
  }
  const wait = waitFor("flow", spec.durable);
  const [groups, nodes] = await placed(parent, 0, checked);
  const call = wireCall("FLOW", ks, { parent, parent_opts: parentOpts, payload: toWire(payload), open: spec.open === true ? 1 : 0, within_ms: within }, groups);
  await callWaited(c.impl, call, wait, "flow", ks.name, [parent]);
  return { id: parent, queue: ks.name, children: nodes };
}

/**
 * See `EchoMQ.addChildren`: the children checked before any wire, the parent's count of children
 * read (their places start there: ids derive from places), then one ADOPT on its queue.
 */
export async function addChildren<P>(
  c: ClientContext<P>,
  parent: FlowParent,
  kids: readonly FlowChild[],
  opts: AddChildrenOptions = {},
): Promise<FlowNode[]> {
  if (parent === null || typeof parent !== "object") throw refuse("the parent must be { queue, id }");
  const ks = c.keyspace(parent.queue);
  assertJobId(parent.id);
  const checked = checkChildren(c, kids);
  const wait = waitFor("addChildren", opts?.durable);
  const count = await c.conn.command(["HGET", ks.job(parent.id), ROW.children], ks.meta);
  const read = count === null ? 0 : Number(String(count));
  const from = Number.isSafeInteger(read) && read >= 0 ? read : 0;
  const [groups, nodes] = await placed(parent.id as JobId, from, checked);
  await callWaited(c.impl, wireCall<"ADOPT">("ADOPT", ks, { parent: parent.id, from }, groups), wait, "addChildren", ks.name, nodes.map((n) => n.id));
  return nodes;
}

/** See `EchoMQ.seal`: one SEAL on the parent's queue. */
export async function seal<P>(c: ClientContext<P>, parent: FlowParent): Promise<boolean> {
  if (parent === null || typeof parent !== "object") throw refuse("the parent must be { queue, id }");
  const ks = c.keyspace(parent.queue);
  assertJobId(parent.id);
  return Number(await c.impl.call(wireCall("SEAL", ks, { parent: parent.id }))) === 1;
}

/** See `EchoMQ.children`: the children of parent `id` of `ks`'s queue, in their order; [] when it has none. */
export async function children<P>(c: ClientContext<P>, ks: Keyspace, id: string): Promise<ChildState[]> {
  assertJobId(id);
  const row = fields(await c.conn.command(["HGETALL", ks.job(id)], ks.meta, Decoder.Bytes));
  const text = (b: Uint8Array | undefined): string | undefined => (b === undefined ? undefined : new TextDecoder().decode(b));
  const n = Number(text(row.get(ROW.children)) ?? "0");
  const out: ChildState[] = [];
  for (let i = 0; i < n; i++) {
    const edge = text(row.get(`${CHILD_FIELD}${i}`));
    if (edge === undefined) continue;
    const [queue, child] = edge.split("\0") as [string, JobId];
    const done = text(row.get(`${DONE_FIELD}${i}`));
    if (done === undefined) {
      out.push({ queue, id: child, state: "unfinished" });
      continue;
    }
    const cut = done.indexOf("\0");
    const [state, detail] = [done.slice(0, cut), done.slice(cut + 1)];
    if (state === "completed") out.push({ queue, id: child, state, ...(detail === "" ? {} : { result: jsonOrText(detail) }) });
    else if (state === "removed") out.push({ queue, id: child, state });
    else if (state === "large") out.push({ queue, id: child, state: "completed", resultBytes: Number(detail) });
    else out.push({ queue, id: child, state: "failed", reason: detail });
  }
  return out;
}
