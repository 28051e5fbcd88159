/**
 * The flows chaos proof (issue 36): random flows across queues whose relays and workers are
 * SIGKILLed at exact points — a relay process between its APPLY and its acknowledgement (UNBOX),
 * after a lease, or with an APPLY or UNBOX in flight; a worker process with its children's
 * settles held, partly in flight, all in flight, or landed — then taken over by a relay and
 * workers of this process once the dead ones' leases have run out. Counted per flow: each child
 * made once (one first attempt, one row), each parent woken once (one first attempt) and run
 * after all its children finished, every outcome recorded once on the parent, every outbox empty.
 *
 * Run by tools/flows_chaos.ts (`--trials 500`) and tests/reliability/flows_chaos.test.ts (a few).
 *
 * Queues: four that keep completed jobs, spread over the primaries (parents and children), and
 * one of children only that keeps none (an ack deletes the row there). A round: the three
 * processes are spawned (two stepped relays, one gated worker of every queue); 4 to 10 flows are
 * made (1 to 5 children each, queues and policies drawn, some children planned to fail when their
 * policy is not `fail`); relay 1 steps through the outboxes (the children's creations) and is
 * killed at its drawn point, its entries leased for 4 s; the worker process holds every ready
 * child and is killed at its drawn point (a child it settled may be gone before relay 1's
 * entries come again: a second delivery of a creation after the child finished); relay 2 steps
 * through the outboxes (the outcomes the landed settles wrote) and is killed at its point; then
 * workers here (which relay) finish every flow. A seeded PRNG draws everything: one seed, one run.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { EchoMQ, UnrecoverableError, type Worker } from "../../client.ts";
import { Connection } from "../../lib/client/connection.ts";
import { keyspace } from "../../mod.ts";
import { repoRoot } from "../../tools/embedded/mod.ts";
import { prng } from "../../tools/prng.ts";
import { spread } from "../client/_spread.ts";

/** Where servers run: addresses, and whether they form a cluster. */
export interface Where {
  readonly addresses: ReadonlyArray<{ host: string; port: number }>;
  readonly cluster: boolean;
}

/** What a run counts. */
export interface ChaosFigures {
  trials: number;
  rounds: number;
  children: number;
  /** Children planned to fail (policy ignore, remove or continue). */
  failing: number;
  /** Relay kills by the point they hit. */
  relayKills: Record<string, number>;
  /** Worker kills by the point they hit. */
  workerKills: Record<string, number>;
  /** Children whose handler ran again after a killed worker (a second attempt: not a second child). */
  rerunChildren: number;
  /** Parents whose handler ran again after a killed worker. */
  rerunParents: number;
  /** Children never run, or whose outcome the parent lacks (or records otherwise than planned). */
  lost: number;
  /** Children made twice (a second first attempt). */
  duplicates: number;
  /** Parents woken other than once (run at a first attempt twice, or never run). */
  wokenWrong: number;
  /** Parents that ran while a child had not finished (and no `continue` failure woke them). */
  early: number;
  /** Outbox entries and waiting parents left at the end, over every queue. */
  left: number;
  /** What broke, one line each (at most 20). */
  problems: string[];
}

/** A child script of tests/reliability, stdin and stdout piped, its stdout read line by line. */
class Proc {
  readonly proc: ChildProcess;
  readonly lines: string[] = [];
  #read = 0;
  #buffer = "";
  readonly exited: Promise<void>;

  constructor(script: string, arg: unknown) {
    const root = repoRoot();
    this.proc = spawn(join(root, "node_modules", ".bin", "bun"), [join(root, "tests", "reliability", script), JSON.stringify(arg)], {
      cwd: root,
      stdio: ["pipe", "pipe", "inherit"],
    });
    this.proc.stdout!.on("data", (chunk: Uint8Array) => {
      this.#buffer += new TextDecoder().decode(chunk);
      const parts = this.#buffer.split("\n");
      this.#buffer = parts.pop()!;
      this.lines.push(...parts);
    });
    // "close": after the exit and the last of its stdout (a line written just before the kill)
    this.exited = new Promise((done) => this.proc.once("close", () => done()));
  }

  /** The next line not read yet (waiting for it, at most `ms`). */
  async next(ms = 30_000): Promise<string> {
    const until = Date.now() + ms;
    while (this.lines.length <= this.#read) {
      if (Date.now() > until) throw new Error(`no line within ${ms} ms after ${JSON.stringify(this.lines.slice(-5))}`);
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) throw new Error(`the child exited; it said ${JSON.stringify(this.lines)}`);
      await tick();
    }
    return this.lines[this.#read++]!;
  }

  send(line: string): void {
    this.proc.stdin!.write(`${line}\n`);
  }

  async kill(): Promise<void> {
    this.proc.kill("SIGKILL");
    await this.exited;
  }
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 5));

/** Waits until `ok()` holds (polling), at most `ms`; `what` names it in the error. */
async function until(what: string, ok: () => Promise<boolean> | boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const POLICIES = ["fail", "ignore", "remove", "continue"] as const;
type Policy = (typeof POLICIES)[number];
const RELAY_KILLS = ["after-apply", "after-apply", "after-apply", "after-lease", "inflight-apply", "inflight-unbox", "none"] as const;
const WORKER_KILLS = ["held", "partial", "inflight", "settled"] as const;
/** The lease of the killed worker's jobs and relay 2's entries (ms): how long a takeover waits. */
const LEASE_MS = 1000;
/** Relay 1's lease (ms): longer than the worker's phase, so that its entries come again after it. */
const FIRST_LEASE_MS = 4000;

interface Kid {
  readonly queue: string;
  readonly id: string;
  readonly policy: Policy;
  readonly fail: boolean;
}
interface Trial {
  readonly queue: string;
  readonly id: string;
  readonly kids: Kid[];
}
interface Run {
  readonly attempts: number;
  /** A parent's children not finished when it started. */
  unfinished?: number;
}

/** Runs `trials` random flows on `where` with `backend`, drawn from `seed`; `log` gets a line per round. */
export async function runChaos(
  where: Where,
  backend: "module" | "scripts",
  trials: number,
  seed: number,
  log: (line: string) => void = () => {},
): Promise<ChaosFigures> {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const stem = `chaos-${backend}-${seed}`;
  // four queues that keep completed jobs (parents and children), spread over the primaries, and
  // one of children only that keeps none: an ack deletes the row there
  const mixed = [...spread(`${stem}-a`), spread(`${stem}-b`)[0]];
  const none = spread(`${stem}-none`)[0];
  const queues = [...mixed, none];
  const f: ChaosFigures = {
    trials: 0,
    rounds: 0,
    children: 0,
    failing: 0,
    relayKills: {},
    workerKills: {},
    rerunChildren: 0,
    rerunParents: 0,
    lost: 0,
    duplicates: 0,
    wokenWrong: 0,
    early: 0,
    left: 0,
    problems: [],
  };
  const problem = (line: string): void => void (f.problems.length < 20 && f.problems.push(line));
  const base = { addresses: where.addresses, cluster: where.cluster, backend, queues };
  const mq = await EchoMQ.connect<{ fail?: boolean; parent?: boolean }>({
    addresses: [...where.addresses],
    cluster: where.cluster,
    backend,
    requestTimeout: 10_000,
  });
  const conn = await Connection.open({ addresses: [...where.addresses], cluster: where.cluster, requestTimeout: 10_000 });
  const raw = (q: string, args: string[]): Promise<unknown> => conn.command(args, keyspace(q).meta);
  try {
    await mq.retain(none, { completedMax: 0 });
    while (f.trials < trials) {
      f.rounds++;
      const relays = [
        new Proc("_flow_relay_child.ts", { ...base, leaseMs: FIRST_LEASE_MS }),
        new Proc("_flow_relay_child.ts", { ...base, leaseMs: LEASE_MS }),
      ];
      const worker = new Proc("_flow_worker_child.ts", { ...base, leaseMs: LEASE_MS, gated: true, relay: false, concurrency: 64 });
      try {
        for (const p of [...relays, worker]) if ((await p.next(60_000)) !== "ready") throw new Error("a child did not start");
        // the round's flows
        const round: Trial[] = [];
        const count = Math.min(trials - f.trials, 4 + Math.floor(rand() * 7));
        for (let t = 0; t < count; t++) {
          const shape = Array.from({ length: 1 + Math.floor(rand() * 5) }, () => {
            const policy = pick(POLICIES);
            return { queue: pick(queues), policy, fail: policy !== "fail" && rand() < 0.3 };
          });
          const node = await mq.flow({
            queue: pick(mixed),
            payload: { parent: true },
            children: shape.map((k) => ({ queue: k.queue, payload: { fail: k.fail }, onFailure: k.policy })),
          });
          round.push({ queue: node.queue, id: node.id, kids: node.children.map((c, i) => ({ ...shape[i]!, id: c.id })) });
          f.children += shape.length;
          f.failing += shape.filter((k) => k.fail).length;
        }
        f.trials += count;
        const runs = new Map<string, Run[]>();
        const record = (id: string, run: Run): void => void runs.set(id, [...(runs.get(id) ?? []), run]);

        const k1 = await stepRelay(relays[0]!, pick(RELAY_KILLS), rand() < 0.7 ? 0 : 1);
        f.relayKills[k1] = (f.relayKills[k1] ?? 0) + 1;
        // the worker process holds every ready child (none is ready in a queue it does not hold);
        // what relay 1 left leased stays so until after the worker's kill: a child it applied may
        // have finished (and gone, in the queue that keeps none) before the creation comes again
        await until("the worker process to hold every ready job", async () => {
          let pending = 0;
          let active = 0;
          for (const q of queues) {
            const n = await mq.counts(q);
            pending += n.pending;
            active += n.active;
          }
          return pending === 0 && worker.lines.filter((l) => l.startsWith("start ")).length === active;
        });
        const k2 = await killWorker(worker, pick(WORKER_KILLS), rand, async (ids) => {
          for (const [q, id] of ids) {
            const state = await raw(q, ["HGET", keyspace(q).job(id as never), "state"]);
            if (state === "active") return false;
          }
          return true;
        });
        f.workerKills[k2] = (f.workerKills[k2] ?? 0) + 1;
        for (const l of worker.lines) {
          const words = l.split(" ");
          if (words[0] === "start") record(words[2]!, { attempts: Number(words[3]) });
          if (words[0] === "kids") runs.get(words[1]!)!.at(-1)!.unfinished = Number(words[2]);
        }
        const k3 = await stepRelay(relays[1]!, pick(RELAY_KILLS), rand() < 0.7 ? 0 : 1);
        f.relayKills[k3] = (f.relayKills[k3] ?? 0) + 1;

        // the takeover: workers here, which relay, finish every flow
        const workers: Array<Worker<{ fail?: boolean; parent?: boolean }>> = queues.map((q) =>
          mq.work(q, async (job) => {
            const run: Run = { attempts: job.attempts };
            if (job.payload.parent === true) run.unfinished = (await job.children()).filter((k) => k.state === "unfinished").length;
            record(job.id, run);
            if (job.payload.fail === true) throw new UnrecoverableError("planned failure");
            return `r${job.id}`;
          }, { concurrency: 8, blockMs: 200, maintenanceMs: 1000, relay: { intervalMs: 20, leaseMs: 10_000, onError: () => {} }, onError: () => {} })
        );
        try {
          await until("every parent of the round to complete, every outbox to drain", async () => {
            for (const t of round) {
              if ((await raw(t.queue, ["HGET", keyspace(t.queue).job(t.id as never), "state"])) !== "completed") return false;
            }
            return (await outboxes(queues, raw)) === 0;
          }, 120_000);
          // the children still running (after a `continue` failure woke their parent) end too
          await until("every queue to be idle", async () => {
            for (const q of queues) {
              const n = await mq.counts(q);
              if (n.pending + n.active + n.schedule > 0) return false;
            }
            return (await outboxes(queues, raw)) === 0;
          }, 120_000);
        } finally {
          await Promise.all(workers.map((w) => w.stop()));
        }

        // the counts
        for (const t of round) {
          const pr = runs.get(t.id) ?? [];
          // a first attempt not seen: the killed worker claimed it and died before its handler
          // started (a later attempt then ran); seen twice: woken twice
          const first = pr.filter((r) => r.attempts === 1).length;
          if (first > 1 || pr.length === 0) {
            f.wokenWrong++;
            problem(`parent ${t.queue}/${t.id} woken ${first} times`);
          }
          if (pr.length > 1) f.rerunParents++;
          const continued = t.kids.some((k) => k.fail && k.policy === "continue");
          if (!continued && pr.some((r) => (r.unfinished ?? 0) > 0)) {
            f.early++;
            problem(`parent ${t.queue}/${t.id} ran with ${pr.map((r) => r.unfinished).join(",")} children unfinished`);
          }
          const row = await raw(t.queue, ["HGETALL", keyspace(t.queue).job(t.id as never)]);
          const fields = new Map<string, string>();
          if (Array.isArray(row)) {
            for (const e of row as Array<{ key: unknown; value: unknown }>) fields.set(String(e.key), String(e.value));
          } else if (row !== null && typeof row === "object") {
            for (const [k, v] of Object.entries(row as Record<string, unknown>)) fields.set(k, String(v));
          }
          if (fields.get("finished") !== String(t.kids.length)) problem(`parent ${t.id}: finished ${fields.get("finished")} of ${t.kids.length}`);
          for (const [i, k] of t.kids.entries()) {
            const kr = runs.get(k.id) ?? [];
            const made = kr.filter((r) => r.attempts === 1).length;
            if (made > 1) {
              f.duplicates++;
              problem(`child ${k.queue}/${k.id} made ${made} times`);
            }
            if (kr.length > 1) f.rerunChildren++;
            const want = k.fail ? (k.policy === "remove" ? "removed" : "failed") : "completed";
            const done = (fields.get(`done:${i}`) ?? "").split("\0")[0];
            if (kr.length === 0 || done !== want) {
              f.lost++;
              problem(`child ${k.queue}/${k.id} (${k.policy}${k.fail ? ", failing" : ""}): first attempts ${made}, recorded ${done}`);
            }
          }
        }
        const left = (await outboxes(queues, raw)) + (await waiting(queues, raw));
        f.left += left;
        log(
          `round ${f.rounds}: ${round.length} flows (${f.trials}/${trials}), relay kills ${k1}/${k3}, worker kill ${k2}; ` +
            `so far lost ${f.lost}, duplicates ${f.duplicates}, woken wrong ${f.wokenWrong}, early ${f.early}, left ${f.left}`,
        );
      } finally {
        for (const p of [...relays, worker]) await p.kill();
      }
    }
  } finally {
    conn.close();
    await mq.close();
  }
  return f;
}

async function outboxes(queues: readonly string[], raw: (q: string, args: string[]) => Promise<unknown>): Promise<number> {
  let n = 0;
  for (const q of queues) n += Number(await raw(q, ["ZCARD", keyspace(q).outbox]));
  return n;
}

async function waiting(queues: readonly string[], raw: (q: string, args: string[]) => Promise<unknown>): Promise<number> {
  let n = 0;
  for (const q of queues) n += Number(await raw(q, ["ZCARD", keyspace(q).waiting]));
  return n;
}

/**
 * Steps relay `p` until its drawn kill: `after-apply` (the `skip`+1-th APPLY answered, its UNBOX
 * not sent), `after-lease` (a lease taken, nothing applied), `inflight-apply` / `inflight-unbox`
 * (that step sent, killed at once), `none` (it ends). Returns the point it hit (`end` when the
 * drawn one never came: nothing left to step).
 */
async function stepRelay(p: Proc, kill: (typeof RELAY_KILLS)[number], skip: number): Promise<string> {
  let next = "lease";
  for (;;) {
    if (kill === `inflight-${next}` && skip-- === 0) {
      p.send("step");
      await p.kill();
      return kill;
    }
    p.send("step");
    const line = await p.next();
    if (line === "done") return kill === "none" ? "none" : "end";
    next = line.slice(line.indexOf("next=") + 5);
    const word = line.split(" ")[0];
    if ((kill === "after-apply" && word === "applied") || (kill === "after-lease" && word === "leased")) {
      if (skip-- === 0) {
        await p.kill();
        return kill;
      }
    }
  }
}

/**
 * Kills the gated worker process `p` at its drawn point: `held` (every handler waiting, no settle
 * sent), `partial` (some released, killed at once), `inflight` (all released, killed at once),
 * `settled` (all released, killed once the server shows each settled: `landed(ids)`).
 */
async function killWorker(
  p: Proc,
  kill: (typeof WORKER_KILLS)[number],
  rand: () => number,
  landed: (ids: Array<[string, string]>) => Promise<boolean>,
): Promise<string> {
  const held = p.lines.filter((l) => l.startsWith("start ")).map((l) => l.split(" ")).map(([, q, id]) => [q!, id!] as [string, string]);
  if (held.length === 0) {
    await p.kill();
    return "idle";
  }
  if (kill === "partial") p.send(`go ${1 + Math.floor(rand() * held.length)}`);
  if (kill === "inflight" || kill === "settled") p.send(`go ${held.length}`);
  if (kill === "settled") await until("the worker process's settles to land", () => landed(held));
  await p.kill();
  return kill;
}
