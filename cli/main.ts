/**
 * The `emq` command line: `emq key <queue> <type>`, `emq demo [...]`, `emq inspect <queue> --url …`,
 * `emq ui [...]`.
 * Runs under Bun and Deno. Bad input is one clear line on stderr and a non-zero exit, never a
 * stack trace.
 *
 * @module
 */
import process from "node:process";
import { inspectKey, renderKeyReport } from "./key.ts";
import { UsageError } from "./usage.ts";

const USAGE = `usage:
  emq key <queue> <type>          compose a key; show its hashtag, slot, host and native verdicts
  emq demo [--cluster] [--backend auto|module|scripts] [--url valkey://host:port] [--seconds N]
  emq inspect <queue> --url valkey://host:port [--cluster]
  emq ui [--url valkey://host:port] [--port N]   serve the key panel on 127.0.0.1; print its address`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "key": {
      if (rest.length !== 2) throw new UsageError("emq key takes a queue name and a type, e.g. emq key orders pending");
      const report = inspectKey(rest[0], rest[1]);
      console.log(renderKeyReport(report));
      return report.host === null ? 0 : 1;
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
      const { ui } = await import("./ui/main.ts");
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
