/**
 * Blocked workers across a failover (BullMQ #648 is the known failure: workers blocked on a dead
 * primary never resume). A 3-primary cluster with one replica per primary; for each backend, two
 * idle workers of a queue whose slot the first primary owns, waiting on the server (the module's
 * CLAIM blocked on pending; the scripts' BZPOPMIN on wake). That primary is SIGKILLed; once its
 * replica is promoted, jobs are enqueued: the same workers (no restart) resume and process them.
 * Prints how long each worker took to resume, and what reached their onError meanwhile.
 */
import { expect, test } from "bun:test";
import { EchoMQ, type Worker } from "../../client.ts";
import { keyspace, slot } from "../../mod.ts";
import { type ClusterHandle, command, infoFields, moduleIfBuilt, replicasOf, startCluster, waitUntil } from "../../tools/embedded/mod.ts";
import { sleep } from "./_recorder.ts";
import { BACKENDS, useClosers } from "./_server.ts";

const NODE_TIMEOUT_MS = 2000;
const WORKERS = 2;
const RESUME_CAP_MS = 60_000;
type P = { n: number };

let site: ClusterHandle | undefined;
const closers = useClosers(() => site?.stop());

test("workers blocked on a primary that dies resume on the promoted replica, without a restart", async () => {
  site = await startCluster({
    primaries: 3,
    replicasPerPrimary: 1,
    module: moduleIfBuilt(),
    args: ["--cluster-node-timeout", String(NODE_TIMEOUT_MS)],
  });
  const c = site;
  const victim = c.primaries[0]!;
  const replicaPort = (await replicasOf(c, victim)).at(-1)?.server.port ?? 0;
  expect(replicaPort).toBeGreaterThan(0);

  const queueOn = (prefix: string): string => {
    for (let i = 0; i < 100_000; i++) {
      const q = `${prefix}-${i}`;
      if (c.primaryForSlot(slot(keyspace(q).pending)).id === victim.id) return q;
    }
    throw new Error("no queue name on the victim");
  };

  interface Side {
    backend: "module" | "scripts";
    queue: string;
    mq: EchoMQ<P>;
    workers: Array<Worker<P>>;
    starts: number[][]; // per worker: handler start times
    errors: string[]; // per side: what reached onError
  }
  const sides: Side[] = [];
  const options = (backend: "module" | "scripts") => ({
    addresses: [...c.addresses],
    cluster: true,
    backend,
    requestTimeout: 5000,
  });
  for (const backend of BACKENDS) {
    const mq = await EchoMQ.connect<P>(options(backend));
    closers.push(() => mq.close());
    const side: Side = { backend, queue: queueOn(`bf-${backend}`), mq, workers: [], starts: [], errors: [] };
    for (let w = 0; w < WORKERS; w++) {
      const starts: number[] = [];
      side.starts.push(starts);
      side.workers.push(mq.work(side.queue, async () => {
        starts.push(Date.now());
        await sleep(20);
      }, {
        concurrency: 1,
        leaseMs: 5000,
        blockMs: 5000, // the default: an idle worker waits on the server 5 s at a time
        onError: (e) => side.errors.push(e instanceof Error ? `${e.name}: ${e.message.split("\n")[0]}` : String(e)),
      }));
    }
    sides.push(side);
  }
  const producer = await EchoMQ.connect<P>({ ...options("scripts"), backend: "auto" });
  closers.push(() => producer.close());

  // Warm up: each worker handles a job, then every worker waits on the server, idle.
  for (const s of sides) {
    for (let n = 0; n < 4 * WORKERS && s.starts.some((x) => x.length === 0); n++) {
      await producer.enqueue(s.queue, { n });
      await sleep(100);
    }
  }
  await waitUntil("every worker to have handled a warm-up job", async () => sides.every((s) => s.starts.every((x) => x.length > 0)), 30_000, 50);
  await sleep(500);
  const blocked = async (): Promise<number> => {
    const list = String(await command(victim.server.port, ["CLIENT", "LIST"]));
    return list.split("\n").filter((l) => / flags=\S*b/.test(l)).length;
  };
  await waitUntil("the workers to wait on the victim", async () => (await blocked()) >= WORKERS * sides.length, 30_000, 50);
  const blockedBefore = await blocked();

  process.kill(victim.server.pid, "SIGKILL");
  const killedAt = Date.now();
  const mark = sides.map((s) => s.starts.map((x) => x.length));
  await waitUntil(
    "the victim's replica to be promoted",
    async () => infoFields(await command(replicaPort, ["INFO", "replication"]))["role"] === "master",
    60_000,
    50,
  );
  const promotedAt = Date.now();
  await waitUntil(
    "cluster_state ok on the promoted replica",
    async () => infoFields(await command(replicaPort, ["CLUSTER", "INFO"]))["cluster_state"] === "ok",
    60_000,
    50,
  );

  // Feed each queue until every worker has handled a job enqueued after the promotion.
  const enqueueErrors: string[] = [];
  let firstEnqueue = 0;
  const resumed = sides.map((s) => s.starts.map(() => 0));
  const deadline = Date.now() + RESUME_CAP_MS;
  let n = 1000;
  while (Date.now() < deadline) {
    sides.forEach((s, i) =>
      s.starts.forEach((x, w) => {
        if (resumed[i]![w] === 0 && x.length > mark[i]![w]!) resumed[i]![w] = x[mark[i]![w]!]!;
      })
    );
    if (resumed.every((r) => r.every((t) => t > 0))) break;
    for (const s of sides) {
      try {
        await s.mq.counts(s.queue).then(async (counts) => {
          if (counts.pending < WORKERS) await producer.enqueue(s.queue, { n: n++ });
        });
        firstEnqueue ||= Date.now();
      } catch (e) {
        enqueueErrors.push(e instanceof Error ? `${e.name}: ${e.message.split("\n")[0]}` : String(e));
      }
    }
    await sleep(50);
  }

  const lines = sides.map((s, i) =>
    `${s.backend}: ${resumed[i]!.map((t) => (t > 0 ? `${t - killedAt} ms` : "never")).join(", ")} after the kill ` +
    `(${resumed[i]!.map((t) => (t > 0 ? `${t - promotedAt} ms` : "never")).join(", ")} after the promotion); ` +
    `onError ${s.errors.length}${s.errors.length ? ` (${[...new Set(s.errors)].slice(0, 3).join(" | ")})` : ""}`
  );
  console.log(
    `[blocked_failover] ${blockedBefore} clients blocked on the victim; promotion seen ${promotedAt - killedAt} ms after ` +
      `the SIGKILL; first enqueue accepted ${firstEnqueue ? firstEnqueue - killedAt : "never"} ms after it ` +
      `(${enqueueErrors.length} refused before); workers resumed — ${lines.join("; ")}`,
  );
  for (const r of resumed) for (const t of r) expect(t).toBeGreaterThan(0);
  for (const s of sides) for (const w of s.workers) expect(w.running).toBe(true);
  for (const s of sides) await Promise.all(s.workers.map((w) => w.stop()));
}, 240_000);
