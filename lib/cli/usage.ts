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

/** The flags every command on a server takes: where it is, a cluster or not, and TLS's trust. */
export const SERVER_FLAGS = {
  url: { type: "string" },
  cluster: { type: "boolean", default: false },
  "tls-ca": { type: "string" },
  insecure: { type: "boolean", default: false },
} as const;

/** What {@link SERVER_FLAGS} gave. */
export interface ServerFlags {
  /** `--url`, when given. */
  readonly url?: string | undefined;
  /** `--cluster`. */
  readonly cluster: boolean;
  /** `--tls-ca <file>`: the CA that signs the server's certificate (PEM). */
  readonly tlsCa?: string | undefined;
  /** `--insecure`: no certificate check. */
  readonly insecure: boolean;
}

/** The server flags among parsed `values`. */
export function serverFlags(values: Record<string, unknown>): ServerFlags {
  return {
    url: values.url as string | undefined,
    cluster: values.cluster === true,
    tlsCa: values["tls-ca"] as string | undefined,
    insecure: values.insecure === true,
  };
}

/**
 * Parses `emq <command> <queue> --url valkey://host:port [--cluster] [--tls-ca F] [--insecure]`
 * plus the command's own `options`; refuses anything but one queue name with `--url` in one
 * usage line.
 */
export function parseQueueCommand<O extends NonNullable<ParseArgsConfig["options"]>>(
  command: string,
  argv: string[],
  options: O,
): { queue: string; server: ServerFlags & { url: string }; values: ReturnType<typeof parseArgs<{ options: O; allowPositionals: true }>>["values"] } {
  const parsed = parseFlags({ args: argv, allowPositionals: true, options: { ...SERVER_FLAGS, ...options } });
  const server = serverFlags(parsed.values);
  if (parsed.positionals.length !== 1 || server.url === undefined) {
    throw new UsageError(`emq ${command} takes a queue name and --url, e.g. emq ${command} orders --url valkey://127.0.0.1:6379`);
  }
  return { queue: parsed.positionals[0]!, server: { ...server, url: server.url }, values: parsed.values as never };
}

/** `text` as a whole number from `min` to `max` (`flag` names it in the refusal), or `fallback` when absent. */
export function pageFlag(flag: string, text: string | undefined, min: number, max: number, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^[0-9]{1,15}$/.test(text) || n < min || n > max) throw new UsageError(`${flag} must be an integer from ${min} to ${max}, not ${JSON.stringify(text)}`);
  return n;
}
