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
