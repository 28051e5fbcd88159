/**
 * How `./emq bench` rewrites bench/RESULTS.md: the sections a run writes replace theirs; every
 * other `## ` section — measured by its own command (mutation scores, callgrind profiles) or
 * written by hand — is kept as it was, after the ones the run writes.
 *
 * @module
 */

/** One `## ` section of a results page: its heading line and its whole text. */
export interface Section {
  /** The heading line (`## 3. Throughput, …`). */
  readonly heading: string;
  /** The section's text, its heading included. */
  readonly body: string;
}

/** The `## ` sections of a results page, by heading (the text before the first is not one). */
export function sections(text: string): Section[] {
  return text.split(/\n(?=## )/).slice(1).map((body) => ({ heading: body.slice(0, body.indexOf("\n")), body }));
}

/** A heading without its parenthesis (`## 2. Server CPU per call (…)` → `## 2. Server CPU per call`). */
const title = (heading: string): string => heading.replace(/\s*\(.*$/, "");

/** The new page: what this run wrote, then every section of `previous` the run did not write. */
export function mergeResults(written: string, previous: string): string {
  const titles = new Set(sections(written).map((s) => title(s.heading)));
  const kept = sections(previous).filter((s) => !titles.has(title(s.heading)));
  return [written.trimEnd(), ...kept.map((s) => s.body.trimEnd())].join("\n\n") + "\n";
}
