// Type cost: 500 queueKey + 500 jobKey literal calls may add at most 40 instantiations per call
// over a plain-string baseline with the same calls, measured by `tsc --extendedDiagnostics`.
// jobKey takes a branded id of any namespace: a JOB literal (the fixture) takes the same match as
// CheckJobId; another namespace takes the general fourteen-`infer` match, about 11 instantiations
// more per jobKey call, and has a budget of its own (45 per call, same fixture, USR ids).
// The keyspace's named builders (lane, levels, ready, scheduler: a name checked by CheckName, a
// literal key out) have the same budget of 40 per call, over plain methods with the same calls.
import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ROOT } from "./compiler.ts";

const CALLS = 500;
const BUDGET_PER_CALL = 40;
const OTHER_NAMESPACE_BUDGET_PER_CALL = 45;
const TYPES = ["pending", "active", "schedule", "dead", "meta"];
const B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// Distinct literals per call, so no call is answered from another's cached instantiation.
const id = (ns: string, i: number): string => `${ns}${String(i).padStart(4, "0")}${B62.slice(i % 50, (i % 50) + 7)}`;

function fixture(header: string, ns = "JOB"): string {
  const lines = [header];
  for (let i = 0; i < CALLS; i++) {
    lines.push(`export const q${i} = queueKey("queue-${i}", "${TYPES[i % 5]}");`);
    lines.push(`export const j${i} = jobKey("queue-${i}", "${id(ns, i)}");`);
  }
  return `${lines.join("\n")}\n`;
}

function instantiations(dir: string, name: string, source: string): number {
  const file = join(dir, name);
  writeFileSync(file, source);
  const project = join(dir, `${name}.json`);
  const compilerOptions = {
    strict: true,
    target: "es2022",
    module: "esnext",
    moduleResolution: "bundler",
    allowImportingTsExtensions: true,
    noEmit: true,
    types: [],
    skipLibCheck: true,
  };
  writeFileSync(project, JSON.stringify({ compilerOptions, files: [file] }));
  const tsc = resolve(ROOT, "node_modules/typescript/bin/tsc");
  const run = spawnSync(process.execPath, [tsc, "--extendedDiagnostics", "-p", project], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`tsc failed on ${name}:\n${run.stdout}${run.stderr}`);
  const m = /^Instantiations:\s+(\d+)/m.exec(run.stdout);
  if (!m) throw new Error(`no Instantiations line:\n${run.stdout}`);
  return Number(m[1]);
}

test(`${2 * CALLS} literal key calls stay within ${BUDGET_PER_CALL} instantiations per call`, () => {
  const dir = mkdtempSync(join(tmpdir(), "emq-budget-"));
  const mod = resolve(ROOT, "mod.ts");
  try {
    const literal = instantiations(dir, "literal.ts", fixture(`import { jobKey, queueKey } from "${mod}";`));
    const other = instantiations(dir, "other.ts", fixture(`import { jobKey, queueKey } from "${mod}";`, "USR"));
    const baseline = instantiations(
      dir,
      "baseline.ts",
      fixture(
        `import "${mod}";\n` +
          "const queueKey = (q: string, t: string): string => `emq:{${q}}:${t}`;\n" +
          "const jobKey = (q: string, id: string): string => `emq:{${q}}:job:${id}`;",
      ),
    );
    const perCall = (literal - baseline) / (2 * CALLS);
    const otherPerCall = (other - baseline) / (2 * CALLS);
    console.log(
      `type cost: literal ${literal}, baseline ${baseline}, ${perCall.toFixed(1)} instantiations per call ` +
        `(USR ids: ${otherPerCall.toFixed(1)})`,
    );
    expect(literal).toBeGreaterThan(baseline); // the checks did run
    expect(other).toBeGreaterThan(literal); // the general match did run for USR ids
    expect(perCall).toBeLessThanOrEqual(BUDGET_PER_CALL);
    expect(otherPerCall).toBeLessThanOrEqual(OTHER_NAMESPACE_BUDGET_PER_CALL);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function namedFixture(header: string): string {
  const lines = [header, 'const ks = keyspace("orders");'];
  for (let i = 0; i < CALLS; i++) {
    const call = [`ks.lane("lane-${i}")`, `ks.levels("lane-${i}")`, `ks.ready("lane-${i}", ${i})`, `ks.scheduler("sched-${i}")`][i % 4];
    lines.push(`export const k${i} = ${call};`);
  }
  return `${lines.join("\n")}\n`;
}

test(`${CALLS} literal calls of the named builders stay within ${BUDGET_PER_CALL} instantiations per call`, () => {
  const dir = mkdtempSync(join(tmpdir(), "emq-budget-"));
  const mod = resolve(ROOT, "mod.ts");
  try {
    const literal = instantiations(dir, "named.ts", namedFixture(`import { keyspace } from "${mod}";`));
    const baseline = instantiations(
      dir,
      "named_baseline.ts",
      namedFixture(
        `import "${mod}";\n` +
          "declare function keyspace(q: string): { lane(l: string): string; levels(l: string): string; " +
          "ready(l: string, p: number): string; scheduler(n: string): string };",
      ),
    );
    const perCall = (literal - baseline) / CALLS;
    console.log(`type cost of the named builders: literal ${literal}, baseline ${baseline}, ${perCall.toFixed(1)} instantiations per call`);
    expect(literal).toBeGreaterThan(baseline); // the checks did run
    expect(perCall).toBeLessThanOrEqual(BUDGET_PER_CALL);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
