/**
 * `emq relay <queue…> --url … [--once] [--interval-ms N]`: relays the outboxes of the queues
 * (flows' entries applied in their destination queues, docs/design/flows.md) until interrupted
 * (Ctrl-C, SIGTERM: exit 0); `--once`: one round, printing the entries it acknowledged. For queues
 * no worker serves (workers relay the queues they serve).
 *
 * @module
 */
import process from "node:process";
import { openUrlTarget } from "./target.ts";
import { parseFlags, SERVER_FLAGS, serverFlags, UsageError } from "./usage.ts";

const SIGNALS = ["SIGINT", "SIGTERM"] as const;

/** Runs `emq relay`; resolves with the exit code. */
export async function relayCommand(argv: string[]): Promise<number> {
  const parsed = parseFlags({
    args: argv,
    allowPositionals: true,
    options: { ...SERVER_FLAGS, once: { type: "boolean", default: false }, "interval-ms": { type: "string" } },
  });
  const server = serverFlags(parsed.values);
  const queues = parsed.positionals;
  if (queues.length === 0 || server.url === undefined) {
    throw new UsageError("emq relay takes one or more queue names and --url, e.g. emq relay orders emails --url valkey://127.0.0.1:6379");
  }
  const text = parsed.values["interval-ms"] as string | undefined;
  if (text !== undefined && !/^[1-9]\d{0,6}$/.test(text)) throw new UsageError(`--interval-ms must be 1 to 9999999 ms, not ${JSON.stringify(text)}`);
  const target = await openUrlTarget<unknown>({ ...server, url: server.url, backend: "auto" });
  try {
    if (parsed.values.once === true) {
      process.stdout.write(`${await target.mq.relayOnce(queues)}\n`);
      return 0;
    }
    const relay = target.mq.relay(queues, text === undefined ? {} : { intervalMs: Number(text) });
    await new Promise<void>((resolve) => {
      for (const s of SIGNALS) process.once(s, () => resolve());
    });
    await relay.stop();
    return 0;
  } finally {
    await target.close();
  }
}
