// `./emq bench` rewrites bench/RESULTS.md: it must keep every section it does not write (the
// hand-written studies, the mutation scores), or a bench run silently deletes them.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { mergeResults, sections } from "../../bench/_sections.ts";

test("a run replaces the sections it writes and keeps every other one, in order, after them", () => {
  const previous = "# Results\n\nintro\n\n## 1. Keys (old)\n\nold keys\n\n## 10. A study\n\nby hand\n\n## Mutation testing\n\nscores\n";
  const written = "# Results\n\nnew intro\n\n## 1. Keys (bench/keys.bench.ts)\n\nnew keys\n";
  const out = mergeResults(written, previous);
  expect(sections(out).map((s) => s.heading)).toEqual(["## 1. Keys (bench/keys.bench.ts)", "## 10. A study", "## Mutation testing"]);
  expect(out).toContain("new keys");
  expect(out).not.toContain("old keys");
  expect(out).toContain("by hand");
  expect(out.startsWith("# Results\n\nnew intro")).toBe(true);
});

test("every section of today's RESULTS.md survives a run that writes only sections 1–9", () => {
  const page = readFileSync(new URL("../../bench/RESULTS.md", import.meta.url), "utf8");
  const generated = sections(page).filter((s) => /^## [1-9]\. /.test(s.heading) || s.heading === "## Targets");
  const written = "# Results\n\n" + generated.map((s) => s.body.trimEnd()).join("\n\n") + "\n";
  const out = mergeResults(written, page);
  expect(new Set(sections(out).map((s) => s.heading))).toEqual(new Set(sections(page).map((s) => s.heading)));
});

test("section 21 (bench/flows.ts) says each target's verdict from the report, and that it did not run without one", async () => {
  const { flowsSection } = await import("../../bench/_flows_section.ts");
  const f1 = { addMs: 1, doneMs: 10, cpuPerChildUs: 5 };
  const report = {
    rounds: 1,
    relayMs: 20,
    f1: { "1000": { module: { ...f1, doneMs: 40 }, scripts: f1, bullmq: { ...f1, doneMs: 100 } } },
    f1Ratios: { "1000": { moduleDoneOverBullmq: 0.4 } },
    f3: { edges: 10, sameUsPerFlow: 10, crossUsPerFlow: 25, ratio: 2.5 },
    f6: { fan: 100000, module: 60000, bullmq: { dependencies: 9e6, row: 600 } },
  };
  const text = flowsSection(report, [1, 2, 3]);
  expect(sections(`# R\n\n${text}`).map((s) => s.heading)).toEqual(["## 21. Flows beside BullMQ's FlowProducer (bench/flows.ts)"]);
  expect(text).toContain("| F1: add → parent done ≤ 0.5× BullMQ's at N = 1,000 (module) | 0.40× | met |");
  expect(text).toContain("| F3: a cross-slot edge ≤ 2× a same-slot edge's server CPU | 2.50× | **missed** |");
  expect(text).toMatch(/F6: .* \| 60,000 B \| met/);
  expect(flowsSection(undefined, [])).toContain("Not in this run");
});
