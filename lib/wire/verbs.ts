/**
 * The wire-4 verbs, written once: each verb's declared keys (by role, in order), its arguments (by
 * name, each with its gate), its reply, its effect and the domain refusals it can give. The client
 * builds every call from this table, the Lua twin's steps 1–4 are generated from it, docs/WIRE.md's
 * tables are printed from it, and the native module's unit tests check their own verb table
 * against it (through `tests/vectors/wire.json`).
 *
 * @module
 */
import type { Refusal } from "./refusals.ts";

/** The wire these verbs are. */
export const WIRE = 4;

/**
 * A declared key's role: one of the queue's structures, a job's row (`emq:{q}:job:<id>` with the
 * call's `id` argument), or the base (`emq:{q}:`, never opened: rows of ids popped from a list or
 * set are base + `job:` + id).
 */
export type KeyRole = "row" | "pending" | "active" | "schedule" | "dead" | "base";

/** How an argument is checked at step 4. */
export type Gate =
  | { readonly kind: "job-id" }
  | { readonly kind: "number"; readonly min: 0 | 1 }
  | { readonly kind: "bytes"; readonly refusal: "payload" | "reason"; readonly limit: number };

/** Payload limit of the scripts (the module's `emq.max-payload` default). */
export const MAX_PAYLOAD_BYTES = 1048576;
/** Longest failure reason RETRY and BURY accept. */
export const MAX_REASON_BYTES = 4096;
/** Most digits a number argument may have (so that now + n stays exact as a sorted-set score). */
export const MAX_DIGITS = 15;

/** Every argument of the wire: its gate, a valid sample (for tests and docs) and what it is. */
export const ARGS = {
  id: { gate: { kind: "job-id" }, sample: "JOB00000000001", doc: "the job id (a `JOB` id)" },
  payload: {
    gate: { kind: "bytes", refusal: "payload", limit: MAX_PAYLOAD_BYTES },
    sample: "payload",
    doc: "the job's payload, any bytes",
  },
  due_ms: { gate: { kind: "number", min: 0 }, sample: "0", doc: "when the job falls due, ms since the epoch" },
  lease_ms: { gate: { kind: "number", min: 1 }, sample: "60000", doc: "the lease, in ms from now" },
  delay_ms: { gate: { kind: "number", min: 1 }, sample: "1", doc: "the delay before the job is due again, in ms" },
  limit: { gate: { kind: "number", min: 1 }, sample: "10", doc: "the most ids to move" },
  reason: {
    gate: { kind: "bytes", refusal: "reason", limit: MAX_REASON_BYTES },
    sample: "reason",
    doc: "why the job failed, kept on its row",
  },
} as const satisfies Record<string, { gate: Gate; sample: string; doc: string }>;

/** The name of an argument. */
export type ArgName = keyof typeof ARGS;

/** One verb of the wire. */
export interface VerbSpec {
  /** Declared keys, by role, in order. */
  readonly keys: readonly KeyRole[];
  /** Arguments after the keys, in order. */
  readonly args: readonly ArgName[];
  /** The reply, in words. */
  readonly reply: string;
  /** What it does, in words. */
  readonly effect: string;
  /** Its writes, as commands (docs/WIRE.md, "Writes and the job row"). */
  readonly writes: string;
  /** Step-5 refusals it can give, in the order it checks them. */
  readonly domain: readonly Refusal[];
}

/** The wire-4 verbs, in wire order. */
export const VERBS = {
  ENQUEUE: {
    keys: ["row", "pending"],
    args: ["id", "payload"],
    reply: "integer 1",
    effect: "new row (state `pending`); id pushed on the head of pending",
    writes: "`HSET row state pending payload <p> attempts 0 created_ms <now>`; `LPUSH pending id`",
    domain: ["wrongtype", "duplicate"],
  },
  SCHEDULE: {
    keys: ["row", "schedule"],
    args: ["id", "due_ms", "payload"],
    reply: "integer 1",
    effect: "new row (state `scheduled`); id in schedule at due_ms",
    writes: "`HSET row state scheduled payload <p> attempts 0 created_ms <now> due_ms <due>`; `ZADD schedule <due> id`",
    domain: ["wrongtype", "duplicate"],
  },
  PROMOTE: {
    keys: ["schedule", "pending", "base"],
    args: ["limit"],
    reply: "integer: ids moved",
    effect: "up to limit due ids move schedule → pending",
    writes: "ids of schedule with score ≤ now, ascending (score, then member), at most limit: each " +
      "`ZREM schedule id`, `LPUSH pending id`, and `HSET row state pending` when the row exists",
    domain: ["wrongtype"],
  },
  CLAIM: {
    keys: ["pending", "active", "base"],
    args: ["lease_ms"],
    reply: "array [id, payload, attempts (integer)] or nil",
    effect: "pop one id; into active at now+lease; attempts+1",
    writes: "peek the tail of pending; a tail id whose row is missing is popped and dropped, and the next " +
      "is tried; empty → nil. Else `RPOP pending`, `ZADD active <now+lease_ms> id`, `HINCRBY row attempts 1`, " +
      "`HSET row state active deadline_ms <now+lease_ms>`",
    domain: ["wrongtype", "counter"],
  },
  ACK: {
    keys: ["row", "active"],
    args: ["id"],
    reply: "integer 1",
    effect: "id leaves active; row deleted",
    writes: "`ZREM active id`, `DEL row`",
    domain: ["wrongtype", "not-active"],
  },
  RETRY: {
    keys: ["row", "active", "schedule"],
    args: ["id", "delay_ms", "reason"],
    reply: "integer 1",
    effect: "active → schedule at now+delay; reason kept",
    writes: "`ZREM active id`, `ZADD schedule <now+delay_ms> id`, `HSET row state scheduled due_ms <now+delay_ms> reason <r>`",
    domain: ["wrongtype", "not-active"],
  },
  BURY: {
    keys: ["row", "active", "dead"],
    args: ["id", "reason"],
    reply: "integer 1",
    effect: "active → dead; reason kept",
    writes: "`ZREM active id`, `ZADD dead <now> id`, `HSET row state dead reason <r> buried_ms <now>`",
    domain: ["wrongtype", "not-active"],
  },
  REAP: {
    keys: ["active", "pending", "base"],
    args: ["limit"],
    reply: "integer: ids moved",
    effect: "up to limit ids whose lease expired go back to pending",
    writes: "ids of active with score ≤ now, ascending, at most limit: each `ZREM active id`, `RPUSH pending id` " +
      "(the tail: claimed next), and `HSET row state pending` when the row exists",
    domain: ["wrongtype"],
  },
} as const satisfies Record<string, VerbSpec>;

/** A verb, as it appears after `EMQ.`. */
export type Verb = keyof typeof VERBS;

/** Every verb, in wire order. */
export const VERB_NAMES: readonly Verb[] = Object.keys(VERBS) as Verb[];

/** The refusals verb `v` can give, in check order: shape, layout, fence, its gates, its domain checks. */
export function refusalsOf(v: Verb): Refusal[] {
  const gates = new Set<Refusal>();
  for (const a of VERBS[v].args) {
    const g: Gate = ARGS[a].gate;
    gates.add(g.kind === "job-id" ? "job-id" : g.kind === "number" ? (g.min === 0 ? "non-negative" : "positive") : g.refusal);
  }
  return ["arity", "layout", "fenced", ...gates, ...VERBS[v].domain];
}
