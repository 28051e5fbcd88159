// `./emq bench` runs bench/history_cost.ts and writes its section 20 and targets (issue 37.5/37.6's
// ≤ 1.05× budget): a short real run's report renders, and the verdicts follow the ratios.
import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { HISTORY_BUDGET, type HistoryReport, historySection, historyTargets } from "../../bench/_history_section.ts";
import { sections } from "../../bench/_sections.ts";
import { moduleBuilt } from "../../tools/embedded/mod.ts";

test("bench/run.ts runs history_cost.ts and writes its section and targets", () => {
  const run = readFileSync(new URL("../../bench/run.ts", import.meta.url), "utf8");
  expect(run).toContain('run("history_cost.ts", opt["history-n"], opt["history-rounds"])');
  expect(run).toContain("${historySection(history)}");
  expect(run).toContain("...historyTargets(history),");
});

test("a short run of bench/history_cost.ts (300 jobs, 1 round) renders as section 20 with a target per backend", () => {
  const r = spawnSync(process.execPath, [new URL("../../bench/history_cost.ts", import.meta.url).pathname, "300", "1"], { encoding: "utf8" });
  expect(r.status).toBe(0);
  const report = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as HistoryReport;
  expect(report.n).toBe(300);
  expect(report.rounds).toBe(1);
  const ran = moduleBuilt() ? ["module", "scripts"] : ["scripts"];
  for (const b of ran) {
    const c = report[b as "module" | "scripts"]!;
    expect(c.processUsecPerJob.on).toBeGreaterThan(0);
    expect(c.processUsecPerJob.ratio).toBeCloseTo(c.processUsecPerJob.on / c.processUsecPerJob.off, 9);
  }
  const md = historySection(report);
  expect(sections(md).map((s) => s.heading)).toEqual(["## 20. History and latency histograms, on ÷ off (bench/history_cost.ts)"]);
  expect(md.match(/^\| (module|scripts) \|/gm)!.length).toBe(ran.length);
  const targets = historyTargets(report);
  expect(targets.map((t) => t.what.split(":")[0])).toEqual(ran);
  for (const t of targets) expect(t.shown).toMatch(/^\d+\.\d{3}×$/);
});

test("the verdict is the budget: ≤ 1.05 met, above missed; no report, no targets and a note", () => {
  const cost = (ratio: number) => ({ commandUsecPerJob: { on: 1, off: 1, ratio: 1 }, processUsecPerJob: { on: ratio * 10, off: 10, ratio } });
  const t = historyTargets({ n: 1, rounds: 1, module: cost(HISTORY_BUDGET), scripts: cost(1.06) });
  expect(t.map((x) => x.ok)).toEqual([true, false]);
  expect(historyTargets(undefined)).toEqual([]);
  expect(historySection(undefined)).toContain("Not in this run");
});
