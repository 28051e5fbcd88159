/**
 * Section 20 of bench/RESULTS.md and its targets, from bench/history_cost.ts's report: what the
 * per-minute history and the latency histograms (issue 37.5, 37.6) cost a worker's drain, on ÷ off,
 * per backend — the budget is ≤ 1.05× server CPU per job.
 *
 * @module
 */

/** One backend's medians, µs per job, with history on and off, and on ÷ off. */
export interface HistoryCost {
  /** The server's command time (`INFO commandstats`, EchoMQ's commands only). */
  readonly commandUsecPerJob: { readonly on: number; readonly off: number; readonly ratio: number };
  /** The server process's CPU (`INFO cpu`, sockets included): what the budget is about. */
  readonly processUsecPerJob: { readonly on: number; readonly off: number; readonly ratio: number };
}

/** bench/history_cost.ts's last line: jobs per drain, rounds, and a {@link HistoryCost} per backend it ran. */
export interface HistoryReport {
  /** Jobs per drain. */
  readonly n: number;
  /** Rounds (each one drain with history on, one off). */
  readonly rounds: number;
  /** The module's figures (absent when the module was not built). */
  readonly module?: HistoryCost;
  /** The scripts' figures. */
  readonly scripts?: HistoryCost;
}

/** The budget: history and latency on ÷ off, server CPU per job. */
export const HISTORY_BUDGET = 1.05;

const BACKENDS = ["module", "scripts"] as const;
const f1 = (x: number): string => x.toFixed(1);
const f3 = (x: number): string => x.toFixed(3);

/** The targets rows: one per backend measured, server process CPU on ÷ off ≤ {@link HISTORY_BUDGET}. */
export function historyTargets(h: HistoryReport | undefined): Array<{ what: string; shown: string; ok: boolean }> {
  if (h === undefined) return [];
  return BACKENDS.flatMap((b) => {
    const c = h[b];
    if (c === undefined) return [];
    const r = c.processUsecPerJob.ratio;
    return [{
      what: `${b}: a worker's drain with history and latency on ÷ off ≤ ${HISTORY_BUDGET}× server CPU per job`,
      shown: `${f3(r)}×`,
      ok: r <= HISTORY_BUDGET,
    }];
  });
}

/** Section 20's text (a line saying so when the reports predate it). */
export function historySection(h: HistoryReport | undefined): string {
  const head = "\n## 20. History and latency histograms, on ÷ off (bench/history_cost.ts)\n\n";
  if (h === undefined) return head + "Not in this run (run it alone: `bun bench/history_cost.ts [N] [ROUNDS]`).\n";
  const rows = BACKENDS.flatMap((b) => {
    const c = h[b];
    if (c === undefined) return [];
    const p = c.processUsecPerJob, k = c.commandUsecPerJob;
    return [`| ${b} | ${f1(p.on)} / ${f1(p.off)} | **${f3(p.ratio)}×** | ${f1(k.on)} / ${f1(k.off)} | ${f3(k.ratio)}× |`];
  });
  return head + `A worker (concurrency 64) drains ${h.n.toLocaleString("en-US")} jobs from a queue that keeps its
per-minute history and latency histograms (the default) and from one that does not
(\`retain({ historyMinutes: 0 })\`), ${h.rounds} round${h.rounds === 1 ? "" : "s"} interleaved on one local server, both queues
keeping no completed jobs; the medians of the rounds. Server process CPU is \`INFO cpu\` (sockets
included), command time \`INFO commandstats\` over EchoMQ's commands. Budget: ≤ ${HISTORY_BUDGET}× server CPU per job.

| backend | server CPU µs/job, on / off | on ÷ off | command µs/job, on / off | on ÷ off |
| --- | ---: | ---: | ---: | ---: |
${rows.join("\n")}
`;
}
