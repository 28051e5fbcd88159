/**
 * Reading BullMQ jobs back from EchoMQ rows: one job's `JobJson` (with the collision check), and
 * the BullMQ ids of EchoMQ ids (a counter id is decoded, any other read from its row's envelope).
 *
 * @module
 */
import type { JobJson } from "bullmq";
import { getJob } from "../client/inspect.ts";
import type { JobInfo } from "../client/info.ts";
import { type Envelope, envelopeIn, jobJson } from "./envelope.ts";
import type { JobRef } from "./events.ts";
import { counterIdOf, emqIdOf } from "./ids.ts";
import type { Scope } from "./scope.ts";

/** The row of BullMQ job `bullId`, when it exists and is that job's (not another's that met it on one id). */
export async function rowOf(s: Scope, bullId: string): Promise<JobInfo<unknown> | null> {
  const { c, ks } = await s.on();
  const info = await getJob(c, ks, emqIdOf(bullId));
  if (info === null) return null;
  return bullIdIn(info) === bullId ? info : null;
}

/** The BullMQ id a row stands for: its envelope's, or, for a job an EchoMQ producer admitted, its EchoMQ id. */
export function bullIdIn(info: Pick<JobInfo<unknown>, "id" | "payload" | "createdAt">): string {
  return envelopeIn(info.payload, info.id, info.createdAt)?.id ?? info.id;
}

/** BullMQ's `JobJson` of a row (a job an EchoMQ producer admitted: its payload as data, its EchoMQ id). */
export function rowJson(info: JobInfo<unknown>): JobJson {
  const e = envelopeIn(info.payload, info.id, info.createdAt) ?? foreign(info.id, info.name, info.payload, info.createdAt);
  return jobJson(e, info);
}

/** The envelope BullMQ sees for a job an EchoMQ producer admitted (no envelope): one attempt, its payload as data. */
export function foreign(id: string, name: string | undefined, payload: unknown, ts: number): Envelope {
  return { bullmq: 1, id, name: name ?? "", data: payload ?? null, opts: { attempts: 1 }, ts };
}

/** The BullMQ ids of `emqIds` (decoded, or read from their rows; a row gone keeps its EchoMQ id). */
export async function bullIds(s: Scope, emqIds: readonly string[]): Promise<Map<string, string>> {
  const refs = await jobRefs(s, emqIds, new Set());
  return new Map([...refs].map(([id, ref]) => [id, ref.id]));
}

/**
 * What events say of `emqIds`: each one's BullMQ id (a counter id decoded, any other read from its
 * row), and for those in `rows` (their rows read) its name, the deduplication id it holds and its attempts.
 */
export async function jobRefs(s: Scope, emqIds: readonly string[], rows: ReadonlySet<string>): Promise<Map<string, JobRef>> {
  const out = new Map<string, JobRef>();
  const unread: string[] = [];
  for (const id of emqIds) {
    const n = counterIdOf(id);
    if (n === null || rows.has(id)) unread.push(id);
    else out.set(id, { id: n });
  }
  if (unread.length > 0) {
    const { c, ks } = await s.on();
    const infos = await Promise.all(unread.map((id) => getJob(c, ks, id).catch(() => null)));
    unread.forEach((id, i) => {
      const info = infos[i];
      // a row gone: a counter id still decodes
      if (!info) return void out.set(id, { id: counterIdOf(id) ?? id, name: "", dedup: "" });
      const e = envelopeIn(info.payload, info.id, info.createdAt);
      const dedup = info.dedupKey ?? e?.opts.deduplication?.id ?? "";
      // a counter id decodes: a debounced holder's envelope names the admission that replaced it
      const max = Number(e?.opts.attempts ?? 1);
      const attempts = { made: info.attempts, max: Number.isSafeInteger(max) && max > 0 ? max : 1 };
      out.set(id, { id: counterIdOf(id) ?? bullIdIn(info), name: e?.name ?? info.name ?? "", dedup, attempts });
    });
  }
  return out;
}
