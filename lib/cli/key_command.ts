/**
 * `emq key <queue> <type> [--url valkey://host:port] [--cluster]`: the composed key, its hashtag and
 * slot, and both verdicts. The native verdict comes from the module itself when `--url` reaches a
 * server that has it (an `EMQ.CLAIM` whose lease gate refuses after the layout check: nothing is
 * written), else from its TypeScript port, labelled as such. Exits 1 when either half refuses.
 *
 * @module
 */
import { Connection } from "../client/connection.ts";
import { isQueueType } from "../keyspace/mod.ts";
import { parseUrl } from "./address.ts";
import { inspectKey, renderKeyReport } from "./key.ts";
import { urlOptions } from "./target.ts";
import { parseFlags, SERVER_FLAGS, type ServerFlags, serverFlags, UsageError } from "./usage.ts";

/** Runs `emq key`; resolves with the exit code. */
export async function key(argv: string[]): Promise<number> {
  const parsed = parseFlags({
    args: argv,
    allowPositionals: true,
    options: SERVER_FLAGS,
  });
  const server = serverFlags(parsed.values);
  if (parsed.positionals.length !== 2) throw new UsageError("emq key takes a queue name and a type, e.g. emq key orders pending");
  const [queue, type] = parsed.positionals as [string, string];
  const report = inspectKey(queue, type);
  let native = report.native;
  let source = "its TypeScript port (no server asked: give --url to ask the module)";
  if (server.url !== undefined) {
    const asked = await askModule({ ...server, url: server.url }, queue);
    source = asked.source;
    if (asked.verdict !== undefined) native = asked.verdict;
  }
  // A type no verb derives is no key of the module's, whatever its shape.
  if (native === null && !isQueueType(type) && !type.startsWith("job:")) {
    native = `no verb derives a key of type ${JSON.stringify(type)}`;
  }
  console.log(renderKeyReport({ ...report, native }));
  console.log(`         (native verdict from ${source})`);
  return report.host === null && native === null ? 0 : 1;
}

/**
 * The module's own verdict on the queue name: `EMQ.CLAIM 1 emq:{q}:meta 0 1 0` passes shape and
 * layout and stops at its lease gate (writing nothing) when the name is accepted (`null`); else the
 * server's refusal. `undefined` when the server has no module (the port's verdict stands).
 */
async function askModule(server: ServerFlags & { url: string }, queue: string): Promise<{ verdict?: string | null; source: string }> {
  const { host, port } = parseUrl(server.url);
  const where = `${host}:${port}`;
  let conn: Connection;
  try {
    // the client's connection: glide's logger off (nothing of glide on stdout), errors typed
    conn = await Connection.open({ ...urlOptions(server), cluster: server.cluster, requestTimeout: 5000 }, true);
  } catch (e) {
    throw new UsageError(`cannot reach ${where}: ${(e as Error).message.split("\n")[0]}`);
  }
  const meta = `emq:{${queue}}:meta`;
  const call = (args: string[]): Promise<unknown> => conn.command(args, meta);
  try {
    const info = await call(["COMMAND", "INFO", "emq.claim"]);
    if (!Array.isArray(info) || info[0] === null) return { source: `its TypeScript port (${where} has no emq module)` };
    const reply = await call(["EMQ.CLAIM", "1", meta, "0", "1", "0"]).then(() => "", (e: unknown) => String(e));
    if (/lease_ms must be a positive integer/.test(reply)) return { verdict: null, source: `the module on ${where}` };
    const text = reply.replace(/^[\s\S]*?(keys do not match[^\n]*|CROSSSLOT[^\n]*|MOVED[^\n]*)/, "$1").split("\n")[0]!;
    return { verdict: `the module refuses: ${text}`, source: `the module on ${where}` };
  } finally {
    conn.close();
  }
}
