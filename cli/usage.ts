import { parseArgs, type ParseArgsConfig } from "node:util";

/** A refusal the CLI prints as one line and exits non-zero for (no stack trace). */
export class UsageError extends Error {
  /** Names the error for `emq:` output. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** `parseArgs` with its refusals turned into one-line {@link UsageError}s. */
export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (e) {
    throw new UsageError(String((e as Error).message).split("\n")[0]!);
  }
}

/** The flags every command on a running server takes. */
const SERVER_FLAGS = {
  url: { type: "string" },
  cluster: { type: "boolean", default: false },
} as const;

/**
 * Parses `emq <command> <queue> --url valkey://host:port [--cluster]` plus the command's own
 * `options`; refuses anything but one queue name with `--url` in one usage line.
 */
export function parseQueueCommand<O extends NonNullable<ParseArgsConfig["options"]>>(
  command: string,
  argv: string[],
  options: O,
): { queue: string; url: string; cluster: boolean; values: ReturnType<typeof parseArgs<{ options: O; allowPositionals: true }>>["values"] } {
  const parsed = parseFlags({ args: argv, allowPositionals: true, options: { ...SERVER_FLAGS, ...options } });
  const { url, cluster } = parsed.values as { url?: string; cluster: boolean };
  if (parsed.positionals.length !== 1 || url === undefined) {
    throw new UsageError(`emq ${command} takes a queue name and --url, e.g. emq ${command} orders --url valkey://127.0.0.1:6379`);
  }
  return { queue: parsed.positionals[0]!, url, cluster, values: parsed.values as never };
}
