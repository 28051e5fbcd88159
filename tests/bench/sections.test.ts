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
