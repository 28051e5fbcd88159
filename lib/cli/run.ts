/**
 * The `emq` command line's dispatch, shared by the package's entry point (`cli.ts`:
 * the JSR package's `./cli` export, the npm build's `emq` bin) and a repository checkout's `./emq`
 * (dev/main.ts), which passes a {@link CliSetting} of its own: its usage table, its extra commands
 * (`demo`) and what it adds to `emq ui`. Bad input is one clear line on stderr and a non-zero exit
 * (2 for a {@link UsageError}, 1 otherwise), never a stack trace (`EMQ_DEBUG=1` prints it).
 *
 * @module
 */
import process from "node:process";
import { isClosedOutput } from "./closed_output.ts";
import { asksHelp, CHECKOUT_ONLY, type CommandTable, commandUsage, PACKAGE_COMMANDS, PACKAGE_NOTE, usage } from "./help.ts";
import type { Operation } from "./ops.ts";
import type { UiAddons } from "./ui.ts";
import { UsageError } from "./usage.ts";

/** Where the CLI runs, and what that place adds to the package's commands. */
export interface CliSetting {
  /** Every command's usage, in `emq help`'s order. */
  readonly commands: CommandTable;
  /** The closing line of `emq help` (the package says what needs a checkout). */
  readonly note: string;
  /** Commands this setting runs itself, by name (a checkout's `demo`). */
  readonly extra: Readonly<Record<string, (argv: string[]) => Promise<number>>>;
  /** What `emq ui` gets beyond the dashboard of a `--url` server; null in the package. */
  readonly ui: UiAddons | null;
}

/** The package alone: commands on a server given by `--url`, and `emq key`. */
export const PACKAGE_SETTING: CliSetting = { commands: PACKAGE_COMMANDS, note: PACKAGE_NOTE, extra: {}, ui: null };

/** A command of the package: it runs with the words after its name (`emq ui` with the setting's addons). */
type Command = (rest: string[], setting: CliSetting) => Promise<number>;

/** `emq <operation>`: one verb on a queue (ops.ts). */
const operation = (op: Operation): Command => async (rest) => (await import("./ops.ts")).operate(op, rest);

/** The package's commands by name, each one's module loaded only when it runs. */
const COMMANDS: Readonly<Record<string, Command>> = {
  key: async (rest) => (await import("./key_command.ts")).key(rest),
  requeue: operation("requeue"),
  run: operation("run"),
  pause: operation("pause"),
  resume: operation("resume"),
  retain: operation("retain"),
  drop: operation("drop"),
  limit: async (rest) => (await import("./limit.ts")).limitCommand("limit", rest),
  limits: async (rest) => (await import("./limit.ts")).limitCommand("limits", rest),
  jobs: async (rest) => (await import("./jobs.ts")).jobsCommand(rest),
  job: async (rest) => (await import("./job.ts")).jobCommand(rest),
  flow: async (rest) => (await import("./flow.ts")).flowCommand(rest),
  find: async (rest) => (await import("./job.ts")).findCommand(rest),
  cancel: async (rest) => (await import("./job.ts")).cancelCommand(rest),
  lanes: async (rest) => (await import("./lanes.ts")).lanesCommand(rest),
  events: async (rest) => (await import("./events.ts")).eventsCommand(rest),
  result: async (rest) => (await import("./events.ts")).resultCommand(rest),
  relay: async (rest) => (await import("./relay.ts")).relayCommand(rest),
  import: async (rest) => (await import("./import.ts")).importCommand(rest),
  inspect: async (rest) => (await import("./inspect.ts")).inspect(rest),
  ui: async (rest, setting) => (await import("./ui.ts")).ui(rest, setting.ui),
  module: async (rest) => (await import("./module.ts")).moduleCommand(rest),
  server: async (rest) => (await import("./server.ts")).serverCommand(rest),
};

async function dispatch(argv: string[], setting: CliSetting): Promise<number> {
  const [command, ...rest] = argv;
  // `emq <command> --help` prints that command's usage and does nothing else (emq ui has its own).
  if (command !== undefined && command !== "ui" && Object.hasOwn(setting.commands, command) && asksHelp(rest)) {
    console.log(commandUsage(command, setting.commands));
    return 0;
  }
  if (command !== undefined && Object.hasOwn(setting.extra, command)) return await setting.extra[command]!(rest);
  if (command !== undefined && Object.hasOwn(COMMANDS, command)) return await COMMANDS[command]!(rest, setting);
  switch (command) {
    case undefined:
    case "help":
    case "--help":
    case "-h":
      console.log(usage(setting.commands, setting.note));
      return command === undefined ? 2 : 0;
    default:
      if (Object.hasOwn(CHECKOUT_ONLY, command)) throw new UsageError(CHECKOUT_ONLY[command]!);
      throw new UsageError(`unknown command ${JSON.stringify(command)}\n${usage(setting.commands, setting.note)}`);
  }
}

/**
 * Runs one `emq` command line (`argv` without the program: `["inspect", "orders", "--url", …]`) in
 * `setting`; resolves with its exit code: 0 done, 1 refused (a queue that does not exist, a key
 * either half refuses, a server's error), 2 bad usage or a server it cannot use (unreachable,
 * credentials, TLS). Refusals are printed on stderr as one `emq: …` line.
 */
export async function runCli(argv: string[], setting: CliSetting = PACKAGE_SETTING): Promise<number> {
  try {
    return await dispatch(argv, setting);
  } catch (e) {
    // stdout's reader went away (`emq … | head`): the command stops, quietly (closed_output.ts)
    if (isClosedOutput(e)) return 0;
    console.error(`emq: ${e instanceof Error ? e.message : String(e)}`);
    if (!(e instanceof UsageError) && process.env.EMQ_DEBUG) console.error(e);
    return e instanceof UsageError ? 2 : 1;
  }
}
