/**
 * The `emq` command line: `emq demo`, `emq key`, `emq inspect`, the operations (`requeue`, `pause`,
 * `resume`, `drop`) and `emq ui`; `emq test` and `emq bench` are run by the `emq` script itself.
 * Runs under Bun and Deno. Bad input is one clear line on stderr and a non-zero exit, never a
 * stack trace.
 *
 * @module
 */
import process from "node:process";
import { UsageError } from "./usage.ts";

const USAGE = `usage:
  emq demo [--cluster] [--backend auto|module|scripts] [--url valkey://host:port] [--seconds N]
                                  the main job: producers and workers, live progress, a summary
  emq test                        every test (what CI runs)
  emq bench                       the benchmarks; rewrites bench/RESULTS.md
  emq key <queue> <type> [--url valkey://host:port]
                                  compose a key; its hashtag, slot, host and native verdicts
                                  (native: the module itself with --url, else its TypeScript port)
  emq inspect <queue> --url valkey://host:port [--cluster] [--dead N]
                                  counts, paused state, totals, the latest dead jobs and reasons
  emq requeue <queue> --url … [--ids id,id] [--limit N]   dead jobs back to pending
  emq pause <queue> --url …       claims hand out nothing until resume
  emq resume <queue> --url …
  emq drop <queue> --url … --yes  delete every job and key of the queue
  emq ui [--url valkey://host:port] [--cluster] [--port N]
                                  the key panel, the dashboard (/queues) and /metrics on 127.0.0.1
                                  (no --url: an embedded server with demo traffic to watch)
  emq help                        this text
--url takes credentials as valkey://user:password@host:port (or valkey://:password@host:port for
requirepass), percent-encoded; no message prints the password.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "key": {
      const { key } = await import("./key_command.ts");
      return await key(rest);
    }
    case "requeue":
    case "pause":
    case "resume":
    case "drop": {
      const { operate } = await import("./ops.ts");
      return await operate(command, rest);
    }
    case "demo": {
      const { demo } = await import("./demo.ts");
      return await demo(rest);
    }
    case "inspect": {
      const { inspect } = await import("./inspect.ts");
      return await inspect(rest);
    }
    case "ui": {
      const { ui } = await import("./ui/command.ts");
      return await ui(rest);
    }
    case undefined:
    case "help":
    case "--help":
    case "-h":
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  console.error(`emq: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = e instanceof UsageError ? 2 : 1;
  if (!(e instanceof UsageError) && process.env.EMQ_DEBUG) console.error(e);
}
