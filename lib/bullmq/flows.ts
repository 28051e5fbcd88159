/**
 * BullMQ's flows on EchoMQ's (docs/design/bullmq.md, "Flows"; docs/design/flows.md): a
 * `FlowProducer`'s tree of depth 1 — a parent and its leaf children, in any queues — is one FLOW on
 * the parent's queue; a child in another queue travels through the parent queue's outbox, which a
 * BullMQ `Worker`'s backend relays (`relay`), as do EchoMQ's workers with `relay` and `emq relay`.
 * The parent's envelope names its children by BullMQ's keys (`<prefix>:<queue>:<id>`) and policies,
 * so the dependency getters answer BullMQ's keys from the fan-in EchoMQ keeps on the parent's row.
 * Deeper trees, a flow under an existing parent, and per-job options FLOW cannot carry are refused
 * by name before any write.
 *
 * @module
 */
import type { JobJson, ParentKeyOpts } from "bullmq";
import { encodePayload, toWire } from "../client/codec.ts";
import { children } from "../client/flows.ts";
import { wireCall } from "../wire/mod.ts";
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

/** The most children one FLOW takes (EchoMQ's `MAX_FLOW_CHILDREN`). */
const MAX_CHILDREN = 1000;

/** Why a flow is refused, by reason. */
const WHY_FLOW = {
  nested: "EchoMQ's flows are of depth 1 today (a parent and its leaf children); nested flows come with the FLOW verb's subtrees",
  under: "EchoMQ's FLOW makes a new parent; adding a flow under an existing job (ADOPT) needs an open parent, which BullMQ does not make",
  plain: "FLOW admits a flow's jobs as plain pending jobs: no delay, priority, LIFO, deduplication or repeat on a flow's job",
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

/**
 * BullMQ's `addFlow` for a tree of depth 1 (roots first, as `FlowProducer` lists them): one FLOW on
 * the parent's queue (`queueOf` maps a BullMQ queue to EchoMQ's, `scopeOf` gives its scope); a lone
 * job is an `addJob` (`addOne`). Answers `[null, id]` per entry.
 */
export async function addFlow(
  entries: readonly FlowEntry[],
  queueOf: (name: string, prefix: string) => string,
  scopeOf: (queue: string) => Scope,
  addOne: (s: Scope, job: JobJson, id: string) => Promise<string>,
): Promise<Array<[Error | null, string]>> {
  const [root, ...kids] = entries;
  if (root === undefined) return [];
  if (root.parentKeyOpts?.parentKey) refuse("addFlow (opts.parent)", WHY_FLOW.under);
  if (kids.length === 0) return [[null, await addOne(scopeOf(queueOf(root.queueName, root.prefix)), root.jobData, root.jobId)]];
  const rootKey = `${root.prefix}:${root.queueName}:${root.jobId}`;
  for (const k of kids) {
    if (k.parentKeyOpts?.addToWaitingChildren || k.parentKeyOpts?.parentKey !== rootKey) refuse("addFlow (nested)", WHY_FLOW.nested);
  }
  if (kids.length > MAX_CHILDREN) refuse("addFlow (children)", `one EchoMQ FLOW makes at most ${MAX_CHILDREN} children, got ${kids.length}`);
  for (const e of entries) checkPlain(e);
  const s = scopeOf(queueOf(root.queueName, root.prefix));
  const { c, ks } = await s.on();
  const named: Kid[] = kids.map((k) => [`${k.prefix}:${k.queueName}`, k.jobId, policyOf(k.jobData.opts)]);
  const parent = { ...envelopeOf(root.jobData, root.jobId), kids: named };
  const groups = kids.map((k, i) => ({
    id: emqIdOf(k.jobId),
    queue: c.keyspace(queueOf(k.queueName, k.prefix)).name,
    policy: named[i]![2],
    opts: "",
    body: toWire(encodePayload(c.codec, envelopeOf(k.jobData, k.jobId), "addFlow")),
  }));
  const payload = toWire(encodePayload(c.codec, parent, "addFlow"));
  await c.impl.call(wireCall("FLOW", ks, { parent: emqIdOf(root.jobId), parent_opts: "", payload, open: 0, within_ms: 0 }, groups));
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
