/**
 * The published package, as its consumers get it: tools/package.ts builds the JSR upload (through
 * a stand-in of the JSR publish API) and the npm tarball into a temporary directory; then, from
 * directories outside the repository, a consumer program that imports `@echomq/echomq` and
 * `@echomq/echomq/client` by name enqueues a job on a real valkey-server (scripts backend via
 * `auto`), works it, checks the payload, stops the worker and closes — under Deno (import map to the
 * unpacked upload, glide from npm, the documented permissions only), Bun (`bun add` of the tarball)
 * and Node (`npm install` of the tarball). docs/PACKAGE.md's samples are type-checked as a Deno
 * consumer (the tracing one with the consumer's own `@opentelemetry/api`), and its quick start
 * runs under Deno and Bun. Under Node, with the OpenTelemetry SDK installed beside the tarball, a
 * traced enqueue and worker give a send span and a process span linked to it.
 *
 * glide: the consumers above resolve the newest version of the package's range for
 * `@valkey/valkey-glide` (checked against what npm's registry lists); the lowest of the range is
 * the lock's, what every other suite runs on (Bun and Deno), and a Node, a Bun and a Deno consumer
 * (the last on a node_modules npm filled: Deno alone cannot resolve a glide whose platform
 * packages a registry lacks) run on it too.
 *
 * Caches (Deno, Bun, npm) live in the repository's gitignored .tmp/ and are reused between runs;
 * the build is shared with the other package suites (_shared.ts).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join, posix } from "node:path";
import { EchoMQ } from "../../client.ts";
import { type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import {
  BULLMQ_PEER,
  denoEnv,
  denoJson,
  exportEntries,
  type JsrBuild,
  mustRun,
  type NpmBuild,
  PACKAGE_README,
  packageJson,
  publishedFiles,
  type Ran,
  ROOT,
  run,
} from "../../tools/package.ts";
import { BIN, CACHE_ENV, consumerDir, DENO_EXE, DENO_PERMISSIONS, packages } from "./_shared.ts";

let jsr: JsrBuild;
let npm: NpmBuild;
let server: ServerHandle;

const GLIDE = "@valkey/valkey-glide";
/** The package's range for glide, its lowest version, and the newest version the registry has in it. */
const RANGE = packageJson().dependencies![GLIDE]!;
const LOWEST = RANGE.replace(/^\^/, "");
let newest = "";

beforeAll(async () => {
  const view = run("npm", ["view", `${GLIDE}@${RANGE}`, "version", "--json"], { env: denoEnv(CACHE_ENV), timeoutMs: 60_000 });
  [{ jsr, npm }, server] = await Promise.all([packages(), startServer({ module: false })]);
  const listed = JSON.parse((await view).stdout) as string | string[];
  newest = typeof listed === "string" ? listed : listed.at(-1)!;
}, 300_000);

/** The glide version installed in a consumer directory's node_modules. */
function glideIn(dir: string): string {
  return (JSON.parse(readFileSync(join(dir, "node_modules", GLIDE, "package.json"), "utf8")) as { version: string }).version;
}

/** The glide versions Deno resolves for `file` in `dir` (`deno info`). */
async function glideUnderDeno(dir: string, file: string): Promise<string[]> {
  const info = await mustRun(join(BIN, "deno"), ["info", "--json", file], { cwd: dir, timeoutMs: 120_000 });
  return [...new Set([...info.stdout.matchAll(/"@valkey\/valkey-glide@([0-9.]+)"/g)].map((m) => m[1]!))];
}

afterAll(async () => {
  await server?.stop();
});

/**
 * The consumer program: plain JavaScript that is also TypeScript, so the same text runs under
 * Deno and Bun (as .ts) and Node 20 (as .mjs). `RUNTIME` and `PORT` are filled in per run.
 */
const CONSUMER = `
import { Logger } from "@valkey/valkey-glide";
import { keyspace } from "@echomq/echomq";
import { EchoMQ, RateLimitedError } from "@echomq/echomq/client";

Logger.setLoggerConfig("off");
const queue = "pkg-RUNTIME";
const payload = { runtime: "RUNTIME", n: 42, text: "héllo ✓" };
const mq = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port: PORT }], backend: "auto" });
const limits = await mq.limit(queue, { concurrency: 2, rate: { max: 100, perMs: 1000 } });
const rateLimited = new RateLimitedError(5).ms;
const seen = [];
const id = await mq.enqueue(queue, payload, { lane: "tenant-1" });
const lanes = (await mq.lanes(queue)).lanes.map((l) => [l.name, l.ready]);
const worker = mq.work(queue, async (job) => {
  seen.push({ id: job.id, payload: job.payload, attempts: job.attempts, lane: job.lane });
}, { concurrency: 2 });
const deadline = Date.now() + 15000;
while (seen.length === 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 5));
await worker.stop();
const backend = mq.backend;
await mq.close();
const g = globalThis;
const version = g.Deno ? g.Deno.version.deno : g.Bun ? g.Bun.version : g.process.version;
console.log(JSON.stringify({ runtime: "RUNTIME", version, backend, key: keyspace(queue).pending, id, seen, limits, rateLimited, lanes }));
`;

/**
 * A worker with `handleSignals`, interrupted by the test (SIGTERM) once both its jobs run: the
 * quick job finishes within `stopTimeoutMs` and is acked; the slow one waits for its signal, is
 * handed back at the deadline; then the process exits by itself with 143.
 */
const SIGNALLED = `
import { Logger } from "@valkey/valkey-glide";
import { EchoMQ } from "@echomq/echomq/client";

Logger.setLoggerConfig("off");
const queue = "sig-RUNTIME";
const mq = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port: PORT }], backend: "auto" });
const quick = await mq.enqueue(queue, { quick: true });
const slow = await mq.enqueue(queue, { quick: false });
let started = 0;
mq.work(queue, async (job) => {
  if (++started === 2) console.log(JSON.stringify({ running: [quick, slow] }));
  if (job.payload.quick) await new Promise((done) => setTimeout(done, 300));
  else await new Promise((done) => job.signal.addEventListener("abort", done));
}, { concurrency: 2, handleSignals: true, stopTimeoutMs: 1500 });
setInterval(() => {}, 1000); // nothing else to do: only a signal ends this program
`;

/**
 * Tracing as a Node user sets it up: the SDK's in-memory exporter, a job enqueued under tracing
 * and worked here; prints the send span's context and the process span's link to it.
 */
const TRACED = `
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { EchoMQ } from "@echomq/echomq/client";

const exporter = new InMemorySpanExporter();
api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
api.trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
const queue = "traced-RUNTIME";
const mq = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port: PORT }], backend: "auto", tracing: { api } });
const id = await mq.enqueue(queue, { n: 1 });
let done = false;
const worker = mq.work(queue, () => void (done = true));
const deadline = Date.now() + 15000;
while (!done && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
await worker.stop();
await mq.close();
const spans = exporter.getFinishedSpans();
const send = spans.find((s) => s.name === "send " + queue);
const process = spans.find((s) => s.name === "process " + queue);
console.log(JSON.stringify({
  id,
  send: send && { kind: send.kind, id: send.attributes["messaging.message.id"], spanId: send.spanContext().spanId },
  process: process && { kind: process.kind, id: process.attributes["messaging.message.id"], links: process.links.map((l) => l.context.spanId) },
}));
`;

/** Runs TRACED under node in `dir`: a send span (PRODUCER) and a process span (CONSUMER) linked to it. */
async function expectTraced(dir: string): Promise<void> {
  writeFileSync(join(dir, "traced.mjs"), TRACED.replaceAll("RUNTIME", "node").replace("PORT", String(server.port)));
  const r = await run("node", ["traced.mjs"], { cwd: dir, timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`node traced.mjs exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  const got = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as {
    id: string;
    send: { kind: number; id: string; spanId: string };
    process: { kind: number; id: string; links: string[] };
  };
  expect(got).toEqual({
    id: got.id,
    send: { kind: 3, id: got.id, spanId: got.send.spanId }, // SpanKind.PRODUCER
    process: { kind: 4, id: got.id, links: [got.send.spanId] }, // SpanKind.CONSUMER
  });
}

/** Runs SIGNALLED (written to `file` in `dir`) with `argv`, sends SIGTERM, checks the queue after. */
async function expectSignalled(runtime: string, dir: string, file: string, argv: string[]): Promise<void> {
  writeFileSync(join(dir, file), SIGNALLED.replaceAll("RUNTIME", runtime).replace("PORT", String(server.port)));
  const r = await run(argv[0]!, [...argv.slice(1), file], {
    cwd: dir,
    timeoutMs: 60_000,
    interrupt: { when: '{"running"', signal: "SIGTERM" },
  });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 143, stderr: "" });
  const [quick, slow] = (JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { running: [string, string] }).running;
  const mq = await EchoMQ.connect({ addresses: [{ host: server.host, port: server.port }] });
  try {
    const q = `sig-${runtime}`;
    expect(await mq.getJob(q, quick)).toMatchObject({ state: "completed", attempts: 1 }); // acked: kept completed (the default retention)
    // handed back at the stop's deadline: released, back in pending with its attempt given back (not a failure)
    expect(await mq.getJob(q, slow)).toMatchObject({ state: "pending", attempts: 0 });
    expect((await mq.counts(q)).active).toBe(0);
  } finally {
    await mq.close();
  }
}

function consumer(runtime: string): string {
  return CONSUMER.replaceAll("RUNTIME", runtime).replace("PORT", String(server.port));
}

/** Checks a consumer run: exit 0 and the one job, seen once with its payload. */
function expectConsumed(r: Ran, runtime: string): Record<string, unknown> {
  if (r.code !== 0) throw new Error(`${runtime} consumer exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  const line = r.stdout.trim().split("\n").at(-1)!;
  const report = JSON.parse(line) as { id: string; seen: unknown[] } & Record<string, unknown>;
  expect(report).toMatchObject({
    runtime,
    backend: "scripts",
    key: `emq:{pkg-${runtime}}:pending`,
    limits: { concurrency: 2, rate: { max: 100, perMs: 1000, burst: 1 }, parkedUntil: null },
    rateLimited: 5,
    lanes: [["tenant-1", 1]],
  });
  expect(report.seen).toEqual([{ id: report.id, payload: { runtime, n: 42, text: "héllo ✓" }, attempts: 1, lane: "tenant-1" }]);
  console.log(`[package] ${line}`);
  return report;
}

/** docs/PACKAGE.md's TypeScript samples, in order. */
function samples(): string[] {
  return [...readFileSync(PACKAGE_README, "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The quick start, on this run's server, with its own queue name. */
function quickStart(runtime: string): string {
  const q = samples().find((s) => s.includes("EchoMQ.connect"));
  if (!q) throw new Error("docs/PACKAGE.md has no quick start (a ts sample calling EchoMQ.connect)");
  expect(q).toContain("port: 6379");
  return q.replace("port: 6379", `port: ${server.port}`).replaceAll('"mail"', `"mail-${runtime}"`);
}

test("JSR upload: deno.json's publish set, README from docs/PACKAGE.md, bare imports rewritten to ranges", async () => {
  // What was staged is what the dry run listed is what was uploaded.
  expect(jsr.dryRun).toEqual(jsr.staged);
  expect(jsr.uploaded).toEqual(jsr.staged);
  for (const [, file] of exportEntries()) expect(jsr.uploaded).toContain(file.replace(/^\.\//, ""));
  expect(jsr.uploaded.filter((f) => /^(tests|tools|bench|native|dev|docs|lib\/ui\/browser)\//.test(f))).toEqual([]);
  expect(readFileSync(join(jsr.unpacked, "README.md"), "utf8")).toBe(readFileSync(PACKAGE_README, "utf8"));
  expect(jsr.requests.map((r) => r.method)).toContain("POST");

  // The repository's own dry run (deno.json unchanged) selects the same files.
  const repo = await mustRun(join(BIN, "deno"), ["publish", "--dry-run", "--allow-dirty"], { cwd: ROOT });
  expect(publishedFiles(repo.stdout + repo.stderr, ROOT)).toEqual(jsr.staged);

  // Dependencies are ranges, the same in deno.json (what the upload is rewritten with) and package.json;
  // and BullMQ, the optional peer of `./bullmq` (its types only), in deno.json at its lowest version.
  const deps = packageJson().dependencies ?? {};
  const imports = denoJson().imports ?? {};
  expect(Object.keys(imports).sort()).toEqual([...Object.keys(deps), "bullmq"].sort());
  expect(imports["bullmq"]).toBe(`npm:bullmq@^${BULLMQ_PEER.match(/>=(\S+)/)![1]}`);
  expect(npm.manifest["peerDependencies"]).toEqual({ bullmq: BULLMQ_PEER });
  for (const [name, range] of Object.entries(deps)) {
    expect(range).toMatch(/^\^\d+\.\d+\.\d+$/);
    expect(imports[name]).toBe(`npm:${name}@${range}`);
  }
  const specifiers = new Set<string>();
  for (const f of jsr.uploaded.filter((p) => p.endsWith(".ts"))) {
    const text = readFileSync(join(jsr.unpacked, f), "utf8");
    // an import (`from "x"`, `import "x"`, `import("x")`), not a string after the word (ADOPT's arg "from")
    for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)"([^"]+)"/g)) {
      const s = m[1]!;
      if (!s.startsWith(".") && !s.startsWith("node:")) specifiers.add(s);
    }
  }
  expect([...specifiers].sort()).toEqual(Object.values(imports).sort());

  // Dependencies run one way: every relative import of an uploaded file is uploaded too (the
  // published CLI, lib/cli, reaches nothing of the repository's dev/ or tools/).
  const missing: string[] = [];
  for (const f of jsr.uploaded.filter((p) => p.endsWith(".ts"))) {
    for (const m of readFileSync(join(jsr.unpacked, f), "utf8").matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)"(\.{1,2}\/[^"]+)"/g)) {
      const target = posix.normalize(posix.join(posix.dirname(f), m[1]!));
      if (!jsr.uploaded.includes(target)) missing.push(`${f} → ${m[1]}`);
    }
  }
  expect(missing).toEqual([]);
});

test("npm tarball: compiled JavaScript and .d.ts for each export, package.json's ranges", () => {
  const exp = npm.manifest["exports"] as Record<string, { types: string; default: string }>;
  for (const [sub] of exportEntries()) {
    expect(npm.files).toContain(exp[sub]!.default.replace(/^\.\//, ""));
    expect(npm.files).toContain(exp[sub]!.types.replace(/^\.\//, ""));
  }
  expect(npm.files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
  expect(npm.files).toContain("README.md");
  expect(npm.manifest["dependencies"]).toEqual(packageJson().dependencies);
  expect(npm.manifest["name"]).toBe(denoJson().name);
  // the emq command: a shim that runs the compiled cli.ts
  expect(npm.manifest["bin"]).toEqual({ emq: "./bin/emq.js" });
  expect(npm.files).toContain("bin/emq.js");
  expect(npm.files).toContain("dist/cli.js");
});

test("Deno consumer: import map to the JSR upload, glide from npm, the documented permissions", async () => {
  const dir = consumerDir("deno");
  const glide = denoJson().imports!["@valkey/valkey-glide"]!;
  const map: Record<string, string> = { "@valkey/valkey-glide": glide };
  // the user's own OpenTelemetry API, which docs/PACKAGE.md's tracing sample hands to connect
  const otel = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> })
    .devDependencies["@opentelemetry/api"];
  map["@opentelemetry/api"] = `npm:@opentelemetry/api@${otel}`;
  // BullMQ, which docs/PACKAGE.md's "Coming from BullMQ" sample imports beside `./bullmq`
  map["bullmq"] = denoJson().imports!["bullmq"]!;
  for (const [sub, file] of exportEntries()) {
    map[sub === "." ? "@echomq/echomq" : `@echomq/echomq/${sub.slice(2)}`] = join(jsr.unpacked, file);
  }
  writeFileSync(join(dir, "deno.json"), JSON.stringify({ imports: map }, null, 2));
  writeFileSync(join(dir, "consumer.ts"), consumer("deno"));
  const deno = join(BIN, "deno");
  const r = await run(deno, ["run", ...DENO_PERMISSIONS, "consumer.ts"], { cwd: dir, timeoutMs: 120_000 });
  expectConsumed(r, "deno");
  expect(await glideUnderDeno(dir, "consumer.ts")).toEqual([newest]);

  // docs/PACKAGE.md: every sample type-checks against the upload; the keyspace one runs with no
  // permission at all, the quick start with the documented ones.
  const all = samples();
  all.forEach((s, i) => writeFileSync(join(dir, `sample_${i}.ts`), s));
  await mustRun(deno, ["check", ...all.map((_, i) => `sample_${i}.ts`)], { cwd: dir, timeoutMs: 120_000 });
  const keyspaceSample = all.findIndex((s) => s.includes("keyspace(") && !s.includes("EchoMQ"));
  const ks = await mustRun(deno, ["run", `sample_${keyspaceSample}.ts`], { cwd: dir });
  expect(ks.stdout).toContain("emq:{orders}:pending emq:{orders}:job:JOB");
  writeFileSync(join(dir, "quickstart.ts"), quickStart("deno"));
  const qs = await run(deno, ["run", ...DENO_PERMISSIONS, "quickstart.ts"], { cwd: dir, timeoutMs: 60_000 });
  expect({ code: qs.code, stderr: qs.code === 0 ? "" : qs.stderr }).toEqual({ code: 0, stderr: "" });
  expect(qs.stdout).toContain("mail to ada@example.com (attempt 1) from emq:{mail-deno}:pending");
  await expectSignalled("deno", dir, "signalled.ts", [DENO_EXE, "run", ...DENO_PERMISSIONS]);
}, 180_000);

test("Bun consumer: bun add of the packed tarball", async () => {
  const dir = consumerDir("bun");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "bun-consumer", private: true, type: "module" }));
  const bun = join(BIN, "bun");
  await mustRun(bun, ["add", npm.tarball, `${GLIDE}@${RANGE}`], { cwd: dir, env: denoEnv(CACHE_ENV), timeoutMs: 120_000 });
  expect(glideIn(dir)).toBe(newest);
  writeFileSync(join(dir, "consumer.ts"), consumer("bun"));
  expectConsumed(await run(bun, ["consumer.ts"], { cwd: dir, timeoutMs: 60_000 }), "bun");
  writeFileSync(join(dir, "quickstart.ts"), quickStart("bun"));
  const qs = await run(bun, ["quickstart.ts"], { cwd: dir, timeoutMs: 60_000 });
  expect({ code: qs.code, stderr: qs.code === 0 ? "" : qs.stderr }).toEqual({ code: 0, stderr: "" });
  expect(qs.stdout).toContain("mail to ada@example.com (attempt 1) from emq:{mail-bun}:pending");
  await expectSignalled("bun", dir, "signalled.ts", [bun]);
}, 180_000);

test("Node consumer: npm install of the packed tarball, compiled JavaScript on Node ≥ 20", async () => {
  const dir = consumerDir("node");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "node-consumer", private: true, type: "module" }));
  const dev = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> })
    .devDependencies;
  const otel = ["@opentelemetry/api", "@opentelemetry/sdk-trace-base", "@opentelemetry/context-async-hooks"].map((p) => `${p}@${dev[p]}`);
  await mustRun("npm", ["install", "--prefer-offline", "--loglevel=error", npm.tarball, `${GLIDE}@${RANGE}`, ...otel], {
    cwd: dir,
    env: denoEnv(CACHE_ENV),
    timeoutMs: 120_000,
  });
  expect(glideIn(dir)).toBe(newest);
  writeFileSync(join(dir, "consumer.mjs"), consumer("node"));
  const report = expectConsumed(await run("node", ["consumer.mjs"], { cwd: dir, timeoutMs: 60_000 }), "node");
  expect(Number(/^v(\d+)\./.exec(String(report["version"]))?.[1])).toBeGreaterThanOrEqual(20);
  await expectSignalled("node", dir, "signalled.mjs", ["node"]);
  await expectTraced(dir);
}, 180_000);

test("the lowest of glide's range: what the suites run on, and a Node, a Bun and a Deno consumer on it", async () => {
  console.log(`[package] glide ${RANGE}: lowest ${LOWEST}, newest ${newest}`);
  expect(glideIn(ROOT)).toBe(LOWEST); // the lock's: every other suite, under Bun and Deno

  const node = consumerDir("node-lowest");
  writeFileSync(join(node, "package.json"), JSON.stringify({ name: "node-lowest", private: true, type: "module" }));
  const npmEnv = { cwd: node, env: denoEnv(CACHE_ENV), timeoutMs: 120_000 };
  await mustRun("npm", ["install", "--prefer-offline", "--loglevel=error", npm.tarball, `${GLIDE}@${LOWEST}`], npmEnv);
  expect(glideIn(node)).toBe(LOWEST);
  writeFileSync(join(node, "consumer.mjs"), consumer("node"));
  expectConsumed(await run("node", ["consumer.mjs"], { cwd: node, timeoutMs: 60_000 }), "node");

  const bunDir = consumerDir("bun-lowest");
  writeFileSync(join(bunDir, "package.json"), JSON.stringify({ name: "bun-lowest", private: true, type: "module" }));
  const bun = join(BIN, "bun");
  await mustRun(bun, ["add", npm.tarball, `${GLIDE}@${LOWEST}`], { cwd: bunDir, env: denoEnv(CACHE_ENV), timeoutMs: 120_000 });
  expect(glideIn(bunDir)).toBe(LOWEST);
  writeFileSync(join(bunDir, "consumer.ts"), consumer("bun"));
  expectConsumed(await run(bun, ["consumer.ts"], { cwd: bunDir, timeoutMs: 60_000 }), "bun");

  // Deno on a node_modules npm filled (nodeModulesDir "manual", as the repository runs): the
  // upload's npm: ranges resolve to what is there.
  const deno = consumerDir("deno-lowest");
  const deps = Object.entries(packageJson().dependencies!).map(([name, range]) => `${name}@${name === GLIDE ? LOWEST : range}`);
  writeFileSync(join(deno, "package.json"), JSON.stringify({ name: "deno-lowest", private: true, type: "module" }));
  await mustRun("npm", ["install", "--prefer-offline", "--loglevel=error", ...deps], { ...npmEnv, cwd: deno });
  expect(glideIn(deno)).toBe(LOWEST);
  const map: Record<string, string> = { [GLIDE]: `npm:${GLIDE}@${LOWEST}` };
  for (const [sub, file] of exportEntries()) map[sub === "." ? "@echomq/echomq" : `@echomq/echomq/${sub.slice(2)}`] = join(jsr.unpacked, file);
  writeFileSync(join(deno, "deno.json"), JSON.stringify({ imports: map, nodeModulesDir: "manual" }, null, 2));
  writeFileSync(join(deno, "consumer.ts"), consumer("deno"));
  // "manual": Deno takes npm packages from this node_modules alone (a glide missing there fails the run)
  expectConsumed(await run(join(BIN, "deno"), ["run", ...DENO_PERMISSIONS, "consumer.ts"], { cwd: deno, timeoutMs: 120_000 }), "deno");
}, 300_000);
