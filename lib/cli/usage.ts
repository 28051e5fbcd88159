/** A refusal the CLI prints as one line and exits non-zero for (no stack trace). */
export class UsageError extends Error {
  /** Names the error for `emq:` output. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
