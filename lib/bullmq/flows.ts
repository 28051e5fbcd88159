/**
 * BullMQ's flows on EchoMQ's (docs/design/bullmq.md, "Flows"; docs/design/flows.md): a
 * `FlowProducer`'s tree — to EchoMQ's nested depth of 8, in any queues — is one FLOW on the root's
 * queue; a child in another queue, and every child with children, travels through an outbox, which
 * a BullMQ `Worker`'s backend relays (`relay`), as do EchoMQ's workers with `relay` and `emq relay`.
 * Each parent's envelope names its children by BullMQ's keys (`<prefix>:<queue>:<id>`) and policies,
 * so the dependency getters answer BullMQ's keys from the fan-in EchoMQ keeps on the parent's row (a
 * middle node's too). A flow under an existing parent, several trees at once, and per-job options
 * FLOW cannot carry are refused by name before any write.
 *
 * @module
 */
import type { JobJson, ParentKeyOpts } from "bullmq";
import { encodePayload, toWire } from "../client/codec.ts";
import { children, NESTED, subtreeBody, type SubtreeEdge } from "../client/flows.ts";
import { MAX_FLOW_DEPTH, MAX_PAYLOAD_BYTES, wireCall } from "../wire/mod.ts";
import { envelopeIn, envelopeOf } from "./envelope.ts";
import { emqIdOf } from "./ids.ts";
import { refuse } from "./refused.ts";
import { rowOf } from "./rows.ts";
import type { Scope } from "./scope.ts";

/** One entry of BullMQ's `addFlow`: a job of the tree, its queue, and its place in it. */
export interface FlowEntry {
  /** The job. */
  readonly jobData: JobJson;
  /** Its BullMQ id. */
  readonly jobId: string;
  /** Its parent (`parentKey`), or that it is a parent (`addToWaitingChildren`). */
  readonly parentKeyOpts: ParentKeyOpts;
  /** Its queue's BullMQ prefix. */
  readonly prefix: string;
  /** Its queue's BullMQ name. */
  readonly queueName: string;
}

/** A child as its parent's envelope names it: BullMQ's qualified queue name, its BullMQ id, its policy (FLOW's). */
export type Kid = readonly [queue: string, id: string, policy: number];

/** The most children one FLOW takes, per parent (EchoMQ's `MAX_FLOW_CHILDREN`). */
const MAX_CHILDREN = 1000;

/** Why a flow is refused, by reason. */
const WHY_FLOW = {
  depth: `EchoMQ's nested flows are at most ${MAX_FLOW_DEPTH} levels of children under the root (MAX_FLOW_DEPTH)`,
  under: "EchoMQ's FLOW makes a new parent; adding a flow under an existing job (ADOPT) needs an open parent, which BullMQ does not make",
  plain: "FLOW admits a flow's jobs as plain pending jobs: no delay, priority, LIFO, deduplication or repeat on a flow's job",
  bulk: "one EchoMQ FLOW makes one tree atomically; FlowProducer.addBulk's trees together (atomic, as BullMQ promises) have no verb " +
    "(add each tree with FlowProducer.add)",
} as const;

/** FLOW's policy of a child's failure: BullMQ's option, or (none given) `fail`. */
function policyOf(opts: JobJson["opts"]): number {
  const o = (opts ?? {}) as Record<string, unknown>;
  if (o.ignoreDependencyOnFailure) return 1;
  if (o.removeDependencyOnFailure) return 2;
  if (o.continueParentOnFailure) return 3;
  return 0; // failParentOnFailure, and BullMQ's default (the parent left waiting forever), which EchoMQ has not
}

/** Refuses a flow job's options FLOW cannot carry. */
function checkPlain(e: FlowEntry): void {
  const o = (e.jobData.opts ?? {}) as Record<string, unknown>;
  for (const what of ["delay", "priority", "lifo", "deduplication", "repeat"] as const) {
    const v = o[what];
    if (v !== undefined && v !== null && v !== 0 && v !== false) refuse(`addFlow (opts.${what})`, WHY_FLOW.plain);
  }
}

/** A node of the tree BullMQ's entries describe: the entry and its children, in the entries' order. */
interface Node {
  readonly entry: FlowEntry;
  readonly children: Node[];
}

/** BullMQ's key of an entry's job, `<prefix>:<queue>:<id>` (what its children's `parentKey` names). */
const keyOf = (e: FlowEntry): string => `${e.prefix}:${e.queueName}:${e.jobId}`;

/**
 * The tree of `entries` (its root first, as `FlowProducer` lists them; the others in any order of
 * levels, each naming its parent by `parentKey`), checked before any write: one root, a parent for
 * every other entry, at most {@link MAX_FLOW_DEPTH} levels and {@link MAX_CHILDREN} children each,
 * options FLOW carries.
 */
function treeOf(entries: readonly FlowEntry[]): Node {
  const [first] = entries;
  if (first!.parentKeyOpts?.parentKey) refuse("addFlow (opts.parent)", WHY_FLOW.under);
  const nodes = new Map<string, Node>(entries.map((e) => [keyOf(e), { entry: e, children: [] }]));
  for (const e of entries.slice(1)) {
    const parentKey = e.parentKeyOpts?.parentKey;
    if (!parentKey) refuse("addFlow (several roots)", WHY_FLOW.bulk);
    const parent = nodes.get(parentKey);
    if (parent === undefined) refuse("addFlow (opts.parent)", WHY_FLOW.under);
    parent.children.push(nodes.get(keyOf(e))!);
  }
  const root = nodes.get(keyOf(first!))!;
  const check = (n: Node, level: number): void => {
    checkPlain(n.entry);
    if (n.children.length === 0) return;
    if (level + 1 > MAX_FLOW_DEPTH) refuse("addFlow (depth)", WHY_FLOW.depth);
    if (n.children.length > MAX_CHILDREN) {
      refuse("addFlow (children)", `one EchoMQ FLOW makes at most ${MAX_CHILDREN} children per parent, got ${n.children.length}`);
    }
    for (const k of n.children) check(k, level + 1);
  };
  check(root, 0);
  return root;
}

/**
 * BullMQ's `addFlow` (roots first, as `FlowProducer` lists them): a tree to {@link MAX_FLOW_DEPTH}
 * levels is one FLOW on the root's queue, each child with children carrying its subtree (EchoMQ's
 * nested flows: a middle node waits in its queue as its root does); `queueOf` maps a BullMQ queue to
 * EchoMQ's, `scopeOf` gives its scope. A lone job is an `addJob` (`addOne`). Every node keeps
 * BullMQ's id (the identity rule maps it: FLOW mints none), so the tree `FlowProducer` answers,
 * `getJob` and the parent references agree. Answers `[null, id]` per entry.
 */
export async function addFlow(
  entries: readonly FlowEntry[],
  queueOf: (name: string, prefix: string) => string,
  scopeOf: (queue: string) => Scope,
  addOne: (s: Scope, job: JobJson, id: string) => Promise<string>,
): Promise<Array<[Error | null, string]>> {
  if (entries.length === 0) return [];
  const root = treeOf(entries);
  const s = scopeOf(queueOf(root.entry.queueName, root.entry.prefix));
  if (root.children.length === 0) return [[null, await addOne(s, root.entry.jobData, root.entry.jobId)]];
  const { c, ks } = await s.on();
  // a node's payload: its envelope, a parent's with its children named (BullMQ's queue, id, policy)
  const payloadOf = (n: Node): string | Uint8Array => {
    const e = envelopeOf(n.entry.jobData, n.entry.jobId);
    const kids: Kid[] = n.children.map((k) => [`${k.entry.prefix}:${k.entry.queueName}`, k.entry.jobId, policyOf(k.entry.jobData.opts)]);
    return encodePayload(c.codec, n.children.length === 0 ? e : { ...e, kids }, "addFlow");
  };
  const edgeOf = (n: Node): SubtreeEdge => {
    const policy = policyOf(n.entry.jobData.opts);
    const queue = c.keyspace(queueOf(n.entry.queueName, n.entry.prefix)).name;
    if (n.children.length === 0) return { id: emqIdOf(n.entry.jobId), queue, policy, opts: "", body: payloadOf(n) };
    const body = subtreeBody(payloadOf(n), n.children.map(edgeOf));
    if (body.byteLength > MAX_PAYLOAD_BYTES) {
      refuse("addFlow (subtree)", `a nested flow's subtree is at most ${MAX_PAYLOAD_BYTES} bytes (job ${n.entry.jobId}'s is ${body.byteLength})`);
    }
    return { id: emqIdOf(n.entry.jobId), queue, policy: policy + NESTED, opts: "", body };
  };
  const groups = root.children.map(edgeOf).map((g) => ({ id: g.id, queue: g.queue, policy: g.policy, opts: g.opts, body: toWire(g.body) }));
  const payload = toWire(payloadOf(root));
  await c.impl.call(wireCall("FLOW", ks, { parent: emqIdOf(root.entry.jobId), parent_opts: "", payload, open: 0, within_ms: 0 }, groups));
  return entries.map((e) => [null, e.jobId]);
}

/** A parent's children as BullMQ keys them, with what its row records of each (null: not a parent, or no such job). */
async function deps(s: Scope, bullId: string): Promise<Array<{ key: string; policy: number; state: string; result?: unknown; reason?: string }> | null> {
  const info = await rowOf(s, bullId);
  if (info === null) return null;
  const kids = (envelopeIn(info.payload, info.id, info.createdAt) as { kids?: Kid[] } | null)?.kids;
  if (!Array.isArray(kids)) return null;
  const { c, ks } = await s.on();
  const states = await children(c, ks, info.id);
  return states.map((st, i) => {
    const [queue, id, policy] = kids[i] ?? [st.queue, st.id, 0];
    return { key: `${queue}:${id}`, policy, state: st.state, result: st.result, reason: st.reason };
  });
}

/** Which of BullMQ's four dependency sets a child is in: processed, unprocessed, ignored (failed, policy ignore) or failed. */
function setOf(d: { policy: number; state: string }): "processed" | "unprocessed" | "ignored" | "failed" | null {
  if (d.state === "completed") return "processed";
  if (d.state === "unfinished") return "unprocessed";
  if (d.state === "failed") return d.policy === 1 ? "ignored" : "failed";
  return null; // removed: BullMQ keeps no trace of it
}

/** BullMQ's `getDependencyCounts`: per type asked, how many children are in it. */
export async function getDependencyCounts(s: Scope, bullId: string, types: readonly string[]): Promise<number[]> {
  const all = (await deps(s, bullId)) ?? [];
  return types.map((t) => all.filter((d) => setOf(d) === t).length);
}

/** BullMQ's `getProcessedChildrenValues`: each completed child's key → its result (JSON). */
export async function getProcessedChildrenValues(s: Scope, bullId: string): Promise<Record<string, string>> {
  const all = (await deps(s, bullId)) ?? [];
  return Object.fromEntries(all.filter((d) => setOf(d) === "processed").map((d) => [d.key, JSON.stringify(d.result ?? null)]));
}

/** BullMQ's `getIgnoredChildrenFailures`: each ignored child's key → its failure reason. */
export async function getIgnoredChildrenFailures(s: Scope, bullId: string): Promise<Record<string, string>> {
  const all = (await deps(s, bullId)) ?? [];
  return Object.fromEntries(all.filter((d) => setOf(d) === "ignored").map((d) => [d.key, d.reason ?? ""]));
}

/** One page of a dependency set (BullMQ's cursor: the next offset, 0 when done). */
function page<T>(items: T[], opt: { cursor?: number; count?: number } | undefined): [T[], number] {
  const from = opt?.cursor ?? 0;
  const count = opt?.count ?? 20;
  const next = from + count < items.length ? from + count : 0;
  return [items.slice(from, from + count), next];
}

/** BullMQ's `getDependencies`: the children by set (all of them, or a page of each set asked). */
export async function getDependencies(
  s: Scope,
  bullId: string,
  opts: { processed?: { cursor?: number; count?: number }; unprocessed?: object; ignored?: object; failed?: object },
): Promise<Record<string, unknown>> {
  const all = (await deps(s, bullId)) ?? [];
  const of = (t: string) => all.filter((d) => setOf(d) === t);
  const processed = (ds: typeof all) => Object.fromEntries(ds.map((d) => [d.key, d.result ?? null]));
  const ignored = (ds: typeof all) => Object.fromEntries(ds.map((d) => [d.key, d.reason ?? ""]));
  const keys = (ds: typeof all) => ds.map((d) => d.key);
  if (!opts.processed && !opts.unprocessed && !opts.ignored && !opts.failed) {
    return { processed: processed(of("processed")), unprocessed: keys(of("unprocessed")), ignored: ignored(of("ignored")), failed: keys(of("failed")) };
  }
  const out: Record<string, unknown> = {};
  const sets = [["processed", processed], ["unprocessed", keys], ["ignored", ignored], ["failed", keys]] as const;
  for (const [t, shape] of sets) {
    const asked = opts[t] as { cursor?: number; count?: number } | undefined;
    if (!asked) continue;
    const [items, next] = page(of(t), asked);
    out[t] = shape(items);
    out[`next${t[0]!.toUpperCase()}${t.slice(1)}Cursor`] = next;
  }
  return out;
}
