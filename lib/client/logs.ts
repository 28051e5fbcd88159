/**
 * Job logs (issue 37.2): `job.log(line)` in a handler (`EchoMQ.log` for a claimed job) appends a
 * line to the job's log with LOG, token-checked like a settle — a worker that lost the job logs
 * nothing (`LeaseLostError`). The row keeps the newest {@link LOG_LINES_KEPT} lines, each at most
 * {@link MAX_LOG_LINE_BYTES} bytes (a longer line is cut here, before the wire), and goes with
 * the row: no key of its own. `jobLogs` reads them back, oldest first.
 *
 * @module
 */
import { assertJobId, type Keyspace } from "../keyspace/mod.ts";
import { LOG_LINES_KEPT, MAX_LOG_LINE_BYTES, ROW, wireCall } from "../wire/mod.ts";
import { byteLength } from "./codec.ts";
import type { ClientContext } from "./context.ts";
import { EchoMQError } from "./errors.ts";
import type { JobRef } from "./job.ts";
import { jobRef } from "./options.ts";

/** A job's log as its row keeps it. */
export interface JobLogs {
  /** The newest lines (at most 1000), oldest first. */
  readonly lines: readonly string[];
  /** Lines logged in all: more than `lines.length` when the oldest were written over. */
  readonly total: number;
}

/** `text` cut to at most `max` UTF-8 bytes, never inside a character. */
function cutBytes(text: string, max: number): string {
  if (byteLength(text) <= max) return text;
  const bytes = new TextEncoder().encode(text);
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}

/** See `EchoMQ.log`: one LOG of one line (cut to {@link MAX_LOG_LINE_BYTES} bytes; an empty line keeps nothing). */
export async function appendLog<P>(c: ClientContext<P>, job: JobRef, line: string): Promise<void> {
  const ks = jobRef("log", job, (q) => c.keyspace(q));
  if (typeof line !== "string") throw new EchoMQError("options", `log: the line must be a string, got ${typeof line}`);
  await c.impl.call(wireCall("LOG", ks, {}, [{ id: job.id, token: job.token, line: cutBytes(line, MAX_LOG_LINE_BYTES) }]));
}

/** See `EchoMQ.jobLogs`: the row's count, then its newest lines, in two reads. */
export async function jobLogs<P>(c: ClientContext<P>, ks: Keyspace, id: string): Promise<JobLogs> {
  assertJobId(id);
  const row = ks.job(id);
  const total = Number(await c.conn.command(["HGET", row, ROW.logs], ks.meta)) || 0;
  if (total <= 0) return { lines: [], total: 0 };
  const first = Math.max(0, total - LOG_LINES_KEPT);
  const fields = Array.from({ length: total - first }, (_, k) => `${ROW.log}:${(first + k) % LOG_LINES_KEPT}`);
  const values = (await c.conn.command(["HMGET", row, ...fields], ks.meta)) as unknown[];
  return { lines: values.filter((v) => v !== null && v !== undefined).map(String), total };
}
