/**
 * The CLI's usage text: one entry per command, printed whole by `emq help` and alone by
 * `emq <command> --help` (or `-h`), which does nothing else. The package's commands are here; a
 * repository checkout lays its own entries over them (dev/repository.ts).
 *
 * @module
 */

/** How every command on a server is told where it is. */
export const URL_NOTE = `--url takes valkey://[user:password@]host:port (TLS: valkeys://…; the password percent-encoded;
no message prints it). --tls-ca <file> trusts that CA for valkeys://; --insecure skips the
certificate check (tests only).`;

/** The commands a CLI knows, by name, each with its usage lines, in the order `emq help` lists them. */
export type CommandTable = Readonly<Record<string, string>>;

/** The package's commands: everything that reaches a server by `--url`, and `emq key`. */
export const PACKAGE_COMMANDS: CommandTable = {
  key: `  emq key <queue> <type> [--url valkey://host:port] [--cluster]
                                  compose a key; its hashtag, slot, host and native verdicts
                                  (native: the module itself with --url, else its TypeScript port)`,
  inspect: `  emq inspect <queue> --url valkey://host:port [--cluster] [--dead N]
                                  counts (completed too), paused state, totals, retention,
                                  limits, the latest dead jobs
                                  and reasons, the schedulers (name, spec, next run, runs), the
                                  node that serves the queue's slot; a queue that does not
                                  exist is said so (exit 1)`,
  requeue: `  emq requeue <queue> --url … [--ids id,id] [--limit N]   dead jobs back to pending`,
  run: `  emq run <queue> --url … --ids id,id
                                  scheduled jobs to pending now (each must be scheduled,
                                  else none moves)`,
  pause: `  emq pause <queue> --url … [--lane L]
                                  claims hand out nothing (of lane L only, with --lane) until
                                  resume`,
  resume: `  emq resume <queue> --url … [--lane L]`,
  retain: `  emq retain <queue> --url … [--dead-max N] [--dead-age-ms N] [--completed-max N]
         [--completed-age-ms N] [--events-max N] [--history-minutes N]
                                  how many dead jobs the queue keeps, and how long (0: no
                                  limit); how many completed jobs it keeps with their results
                                  (default 1000; 0: none), and how long (default a day; 0: no
                                  limit); how many events its stream keeps (default 10000; 0:
                                  none written); how many minutes of per-minute history
                                  (default 1440; 0: none); a flag left out keeps its setting`,
  jobs: `  emq jobs <queue> <state> --url … [--offset N] [--limit N]
                                  a page of the queue's jobs in one state (pending, active,
                                  scheduled, dead, completed), one line each: dead and completed
                                  most recent first, with the reason or the result`,
  job: `  emq job <queue> <id> --url …
                                  one job: name, state, attempts, times, lane, priority, dedup
                                  key, scheduler, last reason, result, progress, payload, and
                                  the failed attempts with their stacks (the newest 10)`,
  flow: `  emq flow <queue> <id> --url …
                                  the whole flow the job belongs to, from its root: one job a
                                  line (queue, id, state, result or reason), children indented`,
  find: `  emq find <queue> <text> --url … [--cursor C] [--scan N]
                                  the jobs whose id, dedup key or name is <text>, or whose
                                  payload holds it: a bounded scan (N rows, default 1000) that
                                  says how much it scanned and the cursor to go on from`,
  cancel: `  emq cancel <queue> <id> --url … [--reason R]
                                  cancel a job: waiting, it is buried now; running, it is
                                  buried now and its handler's signal aborts at its worker's
                                  next heartbeat, wherever it runs; finished: said so`,
  limit: `  emq limit <queue> --url … [--concurrency N|none] [--rate MAX/PERIOD|none] [--burst B]
                                  limits every worker obeys: at most N jobs active at once,
                                  MAX claims per PERIOD (10/1s, 100/500ms, 5/1m, 1/2h) with B
                                  at once (default 1); a flag left out keeps its limit, none
                                  removes it; --lane L: lane L's own limits, --per-lane: the
                                  default of every lane without its own`,
  limits: `  emq limits <queue> --url … [--lane L | --per-lane]
                                  the queue's (or the lane's, or every lane's default) limits,
                                  and until when it is parked`,
  lanes: `  emq lanes <queue> --url … [--offset N] [--limit N]
                                  the queue's lanes, busiest first: ready, active, limits in
                                  force, park, paused (default: the first 100)`,
  events: `  emq events <queue> --url … [--from now|start|<id>]
                                  the queue's events as they happen, one JSON line each
                                  (enqueued, claimed, completed, retried, dead …; a gap line
                                  when entries were trimmed unread), until Ctrl-C; --from start:
                                  the oldest kept first, --from <id>: after that event`,
  result: `  emq result <queue> <id> --url … [--timeout-ms N]
                                  waits for the job to finish and prints its result (JSON); a
                                  dead job prints its reason, exit 1`,
  relay: `  emq relay <queue…> --url … [--once] [--interval-ms N]
                                  relays the queues' outboxes (flows' children and outcomes
                                  applied in their queues) until Ctrl-C; --once: one round,
                                  printing the entries done`,
  import: `  emq import bullmq --from redis://host:port --queue <name> [--prefix bull] [--url …]
         [--cluster] [--json]
                                  copies a BullMQ queue's waiting, prioritized, delayed and
                                  failed jobs and its job schedulers from the server holding
                                  BullMQ's keys into EchoMQ (--url; default: the --from server),
                                  as the BullMQ backend (echomq/bullmq) keeps them: same ids,
                                  names, data, options. Run it again: nothing is copied twice.
                                  Not copied, and said why: active jobs (stop or drain the
                                  BullMQ workers first), completed jobs, flows, jobs with
                                  options the backend refuses. Prints per state found, copied,
                                  already there, not copied with reasons (--json: as JSON)`,
  drop: `  emq drop <queue> --url … --yes  delete every job and key of the queue`,
  ui: `  emq ui --url valkey://host:port [--cluster] [--port N] [--bind ADDR] [--token T]
         [--public-origin URL] [--read-only] [--queues a,b]
                                  the dashboard (/) and /metrics of that server`,
  module: `  emq module path                 the native module's file, for valkey-server --loadmodule:
                                  from the platform package npm installed with the package
                                  (Linux x64, glibc), else a local build in a clone`,
  server: `  emq server [--port N] [--valkey-server PATH]
                                  a local valkey-server (VALKEY_SERVER or the one on PATH) with
                                  the module loaded, for development: on 127.0.0.1:N (default
                                  6379), no persistence, until Ctrl-C`,
  help: `  emq help                        this text (emq <command> --help: that command's)`,
};

/** What only a repository checkout runs: the package's CLI refuses these names with this note. */
export const CHECKOUT_ONLY: Readonly<Record<string, string>> = {
  demo: "demo runs in a clone of the repository (./emq demo): it starts an embedded valkey-server, and this CLI only reaches servers by --url",
  test: "test runs in a clone of the repository (./emq test)",
  bench: "bench runs in a clone of the repository (./emq bench)",
};

/** The package's closing note: what it does not have, and where that is. */
export const PACKAGE_NOTE =
  "In a clone of the repository, ./emq also has demo, test and bench, and ui without --url (an embedded\nserver with demo traffic, and the key panel).";

/** Requeue, run, pause, resume, retain, limit: they refuse a queue that does not exist (and create nothing). */
const EXISTING_NOTE = "requeue, run, pause, resume, retain and limit refuse a queue that does not exist, and create nothing.";

/** `emq help`: every command of `table`, the notes, and `note` when given. */
export function usage(table: CommandTable = PACKAGE_COMMANDS, note = PACKAGE_NOTE): string {
  return `usage:\n${Object.values(table).join("\n")}\n${URL_NOTE}\n${EXISTING_NOTE}${note === "" ? "" : `\n${note}`}`;
}

/** `emq <command> --help`: that command's lines, and the note on --url when it takes one. */
export function commandUsage(command: string, table: CommandTable = PACKAGE_COMMANDS): string {
  const lines = table[command];
  if (lines === undefined) return usage(table);
  return `usage:\n${lines}${lines.includes("--url") ? `\n${URL_NOTE}` : ""}`;
}

/** Whether `argv` (a command's arguments) asks for its help. */
export function asksHelp(argv: readonly string[]): boolean {
  return argv.includes("--help") || argv.includes("-h");
}
