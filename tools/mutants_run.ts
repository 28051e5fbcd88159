/**
 * The loop of a mutation campaign (tools/mutants_verbs.ts, tools/mutate_lua.ts): a seeded sample
 * of the mutants, each applied, built, run against the differential test alone, then — when it
 * survives — against the suites that should catch it, and undone; one JSON line per mutant, and
 * the figures at the end: viable mutants, killed by the differential alone, killed by all.
 */
import { appendFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { prng } from "./prng.ts";

/** One mutant: a name and what applies it (a diff, or a search-and-replace). */
export interface Mutant {
  name: string;
  file: string;
  diff?: string;
}

/** What became of a mutant. */
export type Verdict = "unviable" | "killed-by-differential" | "killed-by-suites" | "survived";

export interface Campaign {
  all: Mutant[];
  n: number;
  seed: number;
  list: boolean;
  results: string;
  /** Every mutant of `all`, in order (the named ones), not a sample. */
  ordered?: boolean;
  /** Applies (`undo`: removes) the mutant; false when it does not apply. */
  apply: (m: Mutant, undo: boolean) => boolean;
  /** Builds what the tests load; false when the mutant does not build (unviable). */
  build: () => boolean;
  /** Whether the differential test passes (true), else what failed. */
  differential: () => true | string;
  /** Whether the other suites pass (true), else what failed. */
  suites: () => true | string;
}

/** A seeded shuffle (mulberry32): the same seed draws the same sample. */
function sample<T>(xs: readonly T[], n: number, seed: number): T[] {
  const rand = prng(seed);
  const pool = [...xs];
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, n);
}

/** A command-line option's value (`--name value`), or `dflt`. */
export function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : dflt;
}

/** The sample a campaign's command line asks for (`--n`, `--seed`, `--list`), its results in `scratch`. */
export function sampleOptions(scratch: string): Pick<Campaign, "n" | "seed" | "list" | "results"> {
  return {
    n: Number(arg("n", "40")),
    seed: Number(arg("seed", "1")),
    list: process.argv.includes("--list"),
    results: join(scratch, "results.jsonl"),
  };
}

/** Runs the sample `c` asks for, each mutant applied, tested and undone, one line of `c.results` each. */
export async function campaign(c: Campaign): Promise<void> {
  // --only a|b: the mutants whose names hold one of these (a campaign's survivors again), not a sample
  const only = arg("only", "");
  const chosen = c.ordered ? c.all : only ? c.all.filter((m) => only.split("|").some((o) => m.name.includes(o))) : sample(c.all, c.n, c.seed);
  if (c.list) {
    for (const m of chosen) console.log(m.name);
    return;
  }
  // --from k: resume a campaign after its first k mutants (their lines kept)
  const from = process.argv.includes("--from") ? Number(process.argv[process.argv.indexOf("--from") + 1]) : 0;
  if (from === 0) rmSync(c.results, { force: true });
  // the baseline: every suite passes unmutated (else a kill means nothing); --no-baseline when
  // a run on the same sources just showed it
  if (!process.argv.includes("--no-baseline")) {
    const failed = !c.build() ? "the build" : [c.differential(), c.suites()].find((x) => x !== true);
    if (failed !== undefined) throw new Error(`the baseline fails (${failed}): fix it before a campaign`);
  }
  const count: Record<Verdict, number> = { "unviable": 0, "killed-by-differential": 0, "killed-by-suites": 0, "survived": 0 };
  console.log(`${chosen.length} of ${c.all.length} mutants, seed ${c.seed}`);
  for (const [k, m] of chosen.entries()) {
    if (k < from) continue;
    const started = Date.now();
    if (!c.apply(m, false)) {
      console.log(`skip (does not apply): ${m.name}`);
      continue;
    }
    let verdict: Verdict = "survived";
    let by: string | undefined;
    try {
      if (!c.build()) verdict = "unviable";
      else {
        const d = c.differential();
        if (d !== true) [verdict, by] = ["killed-by-differential", d];
        else {
          const o = c.suites();
          if (o !== true) [verdict, by] = ["killed-by-suites", o];
        }
      }
    } finally {
      if (!c.apply(m, true)) throw new Error(`cannot undo ${m.name}`);
    }
    count[verdict]++;
    appendFileSync(c.results, JSON.stringify({ name: m.name, file: m.file, verdict, by, seconds: Math.round((Date.now() - started) / 1000) }) + "\n");
    console.log(`${k + 1}/${chosen.length} ${verdict}${by ? ` (${by})` : ""}: ${m.name}`);
  }
  const viable = chosen.length - count.unviable;
  const killed = count["killed-by-differential"] + count["killed-by-suites"];
  const pct = (x: number): string => (viable === 0 ? "-" : `${Math.round((100 * x) / viable)} %`);
  console.log(
    `viable ${viable}, killed ${killed} (${pct(killed)}), by the differential alone ${count["killed-by-differential"]} (${
      pct(count["killed-by-differential"])
    }), survived ${count.survived}, unviable ${count.unviable}`,
  );
}
