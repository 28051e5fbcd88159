/**
 * The `emq` command line: `emq demo`, `emq key`, `emq inspect`, the operations (`requeue`, `pause`,
 * `resume`, `retain`, `drop`) and `emq ui`; `emq test` and `emq bench` are run by the `emq` script itself.
 * Runs under Bun and Deno. Bad input is one clear line on stderr and a non-zero exit, never a
 * stack trace.
 *
 * @module
 */
import process from "node:process";
import { asksHelp, commandUsage, COMMANDS, usage } from "./help.ts";
import { UsageError } from "./usage.ts";

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // `emq <command> --help` prints that command's usage and does nothing else (emq ui has its own).
  if (command !== undefined && command !== "ui" && Object.hasOwn(COMMANDS, command) && asksHelp(rest)) {
    console.log(commandUsage(command));
    return 0;
  }
  switch (command) {
    case "key": {
      const { key } = await import("./key_command.ts");
      return await key(rest);
    }
    case "requeue":
    case "pause":
    case "resume":
    case "retain":
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
      console.log(usage());
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}\n${usage()}`);
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  console.error(`emq: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = e instanceof UsageError ? 2 : 1;
  if (!(e instanceof UsageError) && process.env.EMQ_DEBUG) console.error(e);
}
