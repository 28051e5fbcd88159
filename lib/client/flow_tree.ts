/**
 * A flow read back whole (`EchoMQ.flowOf`): from any of its jobs up to its root parent, then down
 * through every child, each with its state. Plain reads (`getJob` of each job, routed by its own
 * queue); nothing is written, and the tree is not one snapshot: a child may move while it is read.
 *
 * @module
 */
import type { JobId, Keyspace } from "../keyspace/mod.ts";
import type { ClientContext } from "./context.ts";
import type { ChildState } from "./flows.ts";
import type { JobInfo, JobState } from "./info.ts";
import { getJob } from "./inspect.ts";

/** A job of a flow with its state, and its children's, as `flowOf` reads them. */
export interface FlowTree {
  /** Its queue. */
  readonly queue: string;
  /** Its id. */
  readonly id: JobId;
  /**
   * Its row's state; when its row is gone (a queue that keeps no completed jobs, a removed child),
   * the outcome its parent recorded (`completed`, `failed`, `removed`), or `missing` when there is
   * none (its creation is still in an outbox, or it was removed before it finished).
   */
  readonly state: JobState | "failed" | "removed" | "missing";
  /** Its result (completed, when it returned one). */
  readonly result?: unknown;
  /** A completed child's result length, when its row is gone and its parent kept no result (longer than 64 KiB). */
  readonly resultBytes?: number;
  /** Why it failed (dead, or a failure its parent recorded). */
  readonly reason?: string;
  /** Its children, in their order (none for a job that is no parent). */
  readonly children: readonly FlowTree[];
}

/** How many levels `flowOf` climbs from the job it is given to the root (a guard against a hand-edited cycle). */
const MAX_CLIMB = 64;
/** Children read at once (the client's in-flight requests stay well under glide's limit). */
const READ_AT_ONCE = 100;

/** See `EchoMQ.flowOf`: null when the job is not there. */
export async function flowOf<P>(c: ClientContext<P>, ks: Keyspace, id: string): Promise<FlowTree | null> {
  let info = await getJob(c, ks, id);
  if (info === null) return null;
  for (let up = 0; info.parent !== undefined && up < MAX_CLIMB; up++) {
    const parent: JobInfo<P> | null = await getJob(c, c.keyspace(info.parent.queue), info.parent.id);
    if (parent === null) break;
    info = parent;
  }
  return await down(c, info);
}

/** The tree under `info`, read level by level. */
async function down<P>(c: ClientContext<P>, info: JobInfo<P>): Promise<FlowTree> {
  const kids = info.children ?? [];
  const trees: FlowTree[] = [];
  for (let at = 0; at < kids.length; at += READ_AT_ONCE) {
    trees.push(...await Promise.all(kids.slice(at, at + READ_AT_ONCE).map((k) => child(c, k))));
  }
  return node(info, trees);
}

/** A child's tree: from its row when it has one, else from what its parent recorded. */
async function child<P>(c: ClientContext<P>, k: ChildState): Promise<FlowTree> {
  const info = await getJob(c, c.keyspace(k.queue), k.id);
  if (info !== null) return await down(c, info);
  return {
    queue: k.queue,
    id: k.id,
    state: k.state === "unfinished" ? "missing" : k.state,
    ...("result" in k ? { result: k.result } : {}),
    ...(k.resultBytes === undefined ? {} : { resultBytes: k.resultBytes }),
    ...(k.reason === undefined ? {} : { reason: k.reason }),
    children: [],
  };
}

/** A job's node of the tree. */
function node<P>(info: JobInfo<P>, children: FlowTree[]): FlowTree {
  return {
    queue: info.queue,
    id: info.id,
    state: info.state,
    ...("result" in info ? { result: info.result } : {}),
    ...(info.reason === undefined ? {} : { reason: info.reason }),
    children,
  };
}
