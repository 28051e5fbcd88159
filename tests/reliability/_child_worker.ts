/**
 * A worker in a process of its own, for the suites that must act on a whole process (freeze it,
 * kill it, fake its clock, time its exit). Run by worker_crash.test.ts, clock_skew.test.ts and
 * shutdown.test.ts:
 *
 *   bun tests/reliability/_child_worker.ts <port> <queue> <backend> <mode> [arg]
 *
 * Modes (every line it prints goes to stdout, one event each):
 * - `freeze <leaseMs>`: right after sending its first CLAIM, prints `sent` and busy-waits up to
 *   `leaseMs` (the parent SIGSTOPs it meanwhile, so the reply is read only after SIGCONT); prints
 *   `started <id>` when a handler starts and `dropped <message>` for what reaches onError.
 * - `crash <leaseMs>`: claims one job and never finishes it: prints `claimed <id> <attempts> <token>`
 *   once the handler runs, then hangs until killed (at most 120 s), its heartbeat keeping the
 *   lease alive until the kill.
 * - `skew <ms>`: `Date.now` runs `ms` ahead (negative: behind) of the host clock; prints
 *   `handled <id> <host ms since epoch>` for each job it runs.
 * - `exit`: starts a worker, prints `ready` once it waits, then stops it and closes the client,
 *   printing `stopping` just before; then nothing should keep the process alive.
 */
import { execFileSync } from "node:child_process";
import { writeSync } from "node:fs";
import { Logger } from "@valkey/valkey-glide";

const [port, queue, backend, mode, arg] = process.argv.slice(2);
const say = (line: string): void => void writeSync(1, `${line}\n`);
const hostNow = (): number => performance.timeOrigin + performance.now();
if (mode === "skew") {
  const skew = Number(arg);
  const real = Date.now;
  Date.now = () => real() + skew;
}
Logger.setLoggerConfig("off");
const { EchoMQ, Worker } = await import("../../client.ts");
const { cliBinary } = await import("../../tools/embedded/mod.ts");
const mq = await EchoMQ.connect<{ n: number }>({
  addresses: [{ host: "127.0.0.1", port: Number(port) }],
  requestTimeout: 10_000,
  backend: backend === "module" ? "module" : "scripts",
});
setTimeout(() => process.exit(3), 120_000).unref(); // bounded even if nobody kills it

if (mode === "freeze") {
  const leaseMs = Number(arg);
  const base = mq.workerClient();
  let armed = true;
  const client = {
    ...base,
    async dedicated(q: string, blockMs: number) {
      const line = await base.dedicated(q, blockMs);
      return {
        ...line,
        claim(q: string, count: number, lease: number, waitMs: number) {
          const reply = line.claim(q, count, lease, waitMs);
          if (armed) {
            armed = false;
            // The CLAIM is on its way (glide writes it at once). Without returning to the event
            // loop (so the reply stays unread), wait until the server has claimed the job, then
            // until the parent has frozen this process.
            const active = `emq:{${q}}:active`;
            const until = performance.now() + leaseMs;
            while (performance.now() < until) {
              const n = execFileSync(cliBinary(), ["-p", port!, "ZCARD", active], { encoding: "utf8" });
              if (Number(n.trim()) > 0) break;
            }
            say("sent");
            while (performance.now() < until) { /* busy: the parent SIGSTOPs us here */ }
          }
          return reply;
        },
      };
    },
  };
  new Worker(
    client,
    queue!,
    (job) => {
      say(`started ${job.id}`);
    },
    { leaseMs, blockMs: 200, onError: (e) => say(`dropped ${e instanceof Error ? e.message : String(e)}`) },
    () => {},
  );
} else if (mode === "crash") {
  mq.work(queue!, async (job) => {
    say(`claimed ${job.id} ${job.attempts} ${job.token}`);
    await new Promise((r) => setTimeout(r, 120_000)); // "working" until SIGKILL
  }, { leaseMs: Number(arg), blockMs: 200 });
} else if (mode === "skew") {
  mq.work(queue!, (job) => say(`handled ${job.id} ${Math.round(hostNow())}`), { blockMs: 5000 });
  say("ready");
} else if (mode === "exit") {
  const worker = mq.work(queue!, () => {}, { blockMs: 5000 });
  await new Promise((r) => setTimeout(r, 300)); // past the first claim: waiting on the server
  say("stopping");
  await worker.stop();
  await mq.close();
}
