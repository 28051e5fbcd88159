/**
 * The CLI's usage text: one entry per command, printed whole by `emq help` and alone by
 * `emq <command> --help` (or `-h`), which does nothing else.
 *
 * @module
 */

/** How every command on a server is told where it is. */
const URL_NOTE = `--url takes valkey://[user:password@]host:port (TLS: valkeys://…; the password percent-encoded;
no message prints it). --tls-ca <file> trusts that CA for valkeys://; --insecure skips the
certificate check (tests only).`;

/** Each command's usage lines, in the order `emq help` lists them. */
export const COMMANDS: Readonly<Record<string, string>> = {
  demo: `  emq demo [--cluster] [--backend auto|module|scripts] [--url valkey://host:port] [--seconds N]
                                  the main job: producers and workers, live progress, a summary`,
  test: `  emq test                        every test (what CI runs)`,
  bench: `  emq bench                       the benchmarks; rewrites bench/RESULTS.md`,
  key: `  emq key <queue> <type> [--url valkey://host:port] [--cluster]
                                  compose a key; its hashtag, slot, host and native verdicts
                                  (native: the module itself with --url, else its TypeScript port)`,
  inspect: `  emq inspect <queue> --url valkey://host:port [--cluster] [--dead N]
                                  counts, paused state, totals, the latest dead jobs and reasons,
                                  the schedulers (name, spec, next run, runs), the node that
                                  serves the queue's slot; a queue that does not exist
                                  is said so (exit 1)`,
  requeue: `  emq requeue <queue> --url … [--ids id,id] [--limit N]   dead jobs back to pending`,
  pause: `  emq pause <queue> --url …       claims hand out nothing until resume`,
  resume: `  emq resume <queue> --url …`,
  retain: `  emq retain <queue> --url … [--dead-max N] [--dead-age-ms N]
                                  how many dead jobs the queue keeps, and how long (0: no limit)`,
  drop: `  emq drop <queue> --url … --yes  delete every job and key of the queue`,
  ui: `  emq ui [--url valkey://host:port] [--cluster] [--port N] [--bind ADDR] [--token T]
         [--public-origin URL] [--read-only] [--queues a,b]
                                  the dashboard (/), the key panel (/keys) and /metrics
                                  (no --url: an embedded server with demo traffic to watch)`,
  help: `  emq help                        this text (emq <command> --help: that command's)`,
};

/** Requeue, pause, resume, retain: they refuse a queue that does not exist (and create nothing). */
const EXISTING_NOTE = "requeue, pause, resume and retain refuse a queue that does not exist, and create nothing.";

/** `emq help`: every command. */
export function usage(): string {
  return `usage:\n${Object.values(COMMANDS).join("\n")}\n${URL_NOTE}\n${EXISTING_NOTE}`;
}

/** `emq <command> --help`: that command's lines, and the note on --url when it takes one. */
export function commandUsage(command: string): string {
  const lines = COMMANDS[command];
  if (lines === undefined) return usage();
  return `usage:\n${lines}${lines.includes("--url") ? `\n${URL_NOTE}` : ""}`;
}

/** Whether `argv` (a command's arguments) asks for its help. */
export function asksHelp(argv: readonly string[]): boolean {
  return argv.includes("--help") || argv.includes("-h");
}
