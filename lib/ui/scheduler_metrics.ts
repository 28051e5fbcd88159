/**
 * The schedulers' part of `GET /metrics`: per scheduler (labels `queue`, `scheduler`) its next run
 * (`echomq_scheduler_next_run_timestamp_seconds`, a gauge: a value in the past means no worker is
 * firing it) and the jobs its runs admitted (`echomq_scheduler_runs_total`), from the background
 * snapshot (snapshot.ts) as the queues' figures are.
 *
 * @module
 */
import type { SchedulerInfo } from "../client/mod.ts";
import { escapeLabel } from "./metrics.ts";

/** The schedulers' families, written even when there is none. */
export function schedulerExposition(queues: ReadonlyArray<readonly [string, ReadonlyArray<SchedulerInfo<unknown>>]>): string {
  const families: Array<[string, "gauge" | "counter", string, (s: SchedulerInfo<unknown>) => number]> = [
    ["echomq_scheduler_next_run_timestamp_seconds", "gauge", "When the scheduler runs next (seconds since the epoch).", (s) => s.nextRun.getTime() / 1000],
    ["echomq_scheduler_runs_total", "counter", "Jobs the scheduler's runs admitted.", (s) => s.runs],
  ];
  const lines: string[] = [];
  for (const [name, type, help, value] of families) {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [queue, list] of queues) {
      for (const s of list) lines.push(`${name}{queue="${escapeLabel(queue)}",scheduler="${escapeLabel(s.name)}"} ${value(s)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}
