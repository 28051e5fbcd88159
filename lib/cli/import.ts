/**
 * `emq import bullmq --from <redis-url> --queue <name> [--prefix bull] [--url <target>] [--cluster]
 * [--json]`: copies a BullMQ queue's jobs in flight (waiting, prioritized, delayed, failed) and its
 * job schedulers from a server holding BullMQ's own keys into the EchoMQ backend's keyspace
 * (`lib/bullmq/import.ts`), idempotently, and prints what it copied and what it could not, per
 * state, with reasons. Exit 0 when the import ran (even with jobs not copied: the report says
 * which), 1 when it could not read or write, 2 on bad usage.
 *
 * @module
 */
import process from "node:process";
import type { ImportReport } from "../bullmq/import.ts";
import { parseUrl, redactUrl } from "./address.ts";
import { urlOptions } from "./target.ts";
import { parseFlags, SERVER_FLAGS, serverFlags, UsageError } from "./usage.ts";

const USAGE = "emq import bullmq takes --from <redis-url> and --queue <name>, e.g. emq import bullmq --from redis://127.0.0.1:6379 --queue orders";

/** Runs `emq import`; resolves with the exit code. */
export async function importCommand(argv: string[]): Promise<number> {
  const parsed = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      ...SERVER_FLAGS,
      from: { type: "string" },
      queue: { type: "string" },
      prefix: { type: "string", default: "bull" },
      json: { type: "boolean", default: false },
    },
  });
  const [what, ...extra] = parsed.positionals;
  if (what !== "bullmq" || extra.length > 0) throw new UsageError(`emq import knows one source, bullmq: ${USAGE}`);
  const from = parsed.values.from as string | undefined;
  const queue = parsed.values.queue as string | undefined;
  if (from === undefined || queue === undefined || queue === "") throw new UsageError(USAGE);
  parseUrl(from); // a bad address is a usage error, password redacted
  const server = serverFlags(parsed.values);
  const url = server.url ?? from;
  const { importBullmq } = await import("../bullmq/import.ts");
  const report = await importBullmq({
    from,
    queue,
    prefix: parsed.values.prefix as string,
    target: { ...urlOptions({ ...server, url }), cluster: server.cluster, backend: "auto", requestTimeout: 10_000 },
  });
  process.stdout.write(parsed.values.json === true ? `${JSON.stringify(report)}\n` : text(report, redactUrl(from), redactUrl(url)));
  return 0;
}

/** The report as lines: per state found / copied / already there / not copied (with reasons). */
export function text(r: ImportReport, from: string, to: string): string {
  const out = [`BullMQ queue ${r.source} on ${from} → EchoMQ queue ${r.queue} on ${to}`];
  out.push("state         found  copied  already  not copied");
  for (const [state, f] of Object.entries(r.states)) {
    out.push(`${state.padEnd(12)} ${pad(f.found, 6)} ${pad(f.copied, 7)} ${pad(f.present, 8)} ${pad(f.notCopied.length + f.runs, 11)}`);
  }
  const sc = r.schedulers;
  out.push(`${"schedulers".padEnd(12)} ${pad(sc.found, 6)} ${pad(sc.copied, 7)} ${pad(sc.present, 8)} ${pad(sc.notCopied.length, 11)}`);
  for (const [state, f] of Object.entries(r.states)) {
    if (f.runs > 0) out.push(`  ${state} ${f.runs}: runs of a copied job scheduler not yet started (the scheduler makes them on EchoMQ)`);
    for (const n of f.notCopied) out.push(`  ${state} ${n.id}: ${n.reason}`);
  }
  for (const n of sc.notCopied) out.push(`  scheduler ${n.id}: ${n.reason}`);
  if (r.left.active > 0) {
    out.push(`active ${r.left.active}: not copied (a BullMQ worker holds them): stop or drain the BullMQ workers, then import again`);
  }
  if (r.left["waiting-children"] > 0) {
    out.push(`waiting-children ${r.left["waiting-children"]}: not copied (flow parents: EchoMQ makes a flow whole with FLOW)`);
  }
  if (r.left.completed > 0) out.push(`completed ${r.left.completed}: not copied (finished)`);
  out.push(`BullMQ's id counter: ${r.counter} (new jobs without a jobId continue after it)`);
  return `${out.join("\n")}\n`;
}

const pad = (n: number, w: number): string => String(n).padStart(w);
