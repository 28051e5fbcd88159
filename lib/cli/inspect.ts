/**
 * `emq inspect <queue> --url valkey://host:port [--cluster] [--dead N]`: a queue's counts (completed included), paused
 * state, totals, retention and limits (with any park), its oldest pending job, its most recent dead jobs with their
 * reasons, its schedulers (name, spec, next run, runs), and its keys with their slot and the node that serves it (on a cluster, as the cluster
 * says now). Read-only; a queue that does not exist is said so (exit 1).
 *
 * @module
 */
import { keyspace } from "../keyspace/mod.ts";
import { relative, utcText } from "../ui/relative.ts";
import { specWords } from "../ui/scheduler_rows.ts";
import { limitsText } from "../ui/limits_text.ts";
import { NoSuchQueueError, queueExists } from "./ops.ts";
import { openUrlTarget } from "./target.ts";
import { parseQueueCommand, UsageError } from "./usage.ts";

/** The keys `emq inspect` lists, in order (then a row's and a scheduler's, as patterns). */
const SHOWN_KEYS = ["meta", "pending", "active", "schedule", "dead", "completed", "events", "wake", "schedulers"] as const;

/** Runs `emq inspect`; resolves with the exit code. */
export async function inspect(argv: string[]): Promise<number> {
  const { queue, server, values } = parseQueueCommand("inspect", argv, { dead: { type: "string", default: "10" } });
  const deadShown = Number(values.dead);
  if (!Number.isInteger(deadShown) || deadShown < 0 || deadShown > 1000) {
    throw new UsageError(`--dead must be an integer from 0 to 1000, not ${values.dead}`);
  }
  const target = await openUrlTarget<unknown>({ ...server, backend: "auto" });
  try {
    const { mq } = target;
    const ks = keyspace(queue);
    if (!(await queueExists(mq, queue))) throw new NoSuchQueueError(queue, target.description);
    const s = await mq.stats(queue);
    const [oldest] = await mq.jobs(queue, "pending", { limit: 1 });
    console.log(`queue ${JSON.stringify(ks.name)}${s.paused ? " (PAUSED: claims hand out nothing)" : ""}`);
    const parents = s.waitingChildren > 0 ? `, waiting-children ${s.waitingChildren}` : "";
    console.log(`  pending ${s.pending}, active ${s.active}, scheduled ${s.schedule}, dead ${s.dead}, completed ${s.completed}${parents}`);
    console.log(`  totals: enqueued ${s.enqueued}, acked ${s.acked}, retried ${s.retried}, buried ${s.buried}, claims ${s.claims}`);
    const completed = s.completedMax === 0
      ? "no completed kept"
      : `at most ${s.completedMax} completed, ${s.completedAgeMs === 0 ? "no age limit" : `kept ${(s.completedAgeMs / 3_600_000).toFixed(1)} h`}`;
    console.log(
      `  retention: ${s.deadMax === 0 ? "no count limit" : `at most ${s.deadMax} dead`}, ${
        s.deadAgeMs === 0 ? "no age limit" : `dead kept ${(s.deadAgeMs / 3_600_000).toFixed(1)} h`
      }; ${completed}; ${s.eventsMax === 0 ? "no events" : `at most ${s.eventsMax} events`}`,
    );
    console.log(`  limits: ${limitsText(s.limits)}`);
    console.log(`  oldest pending: ${oldest ? `${oldest.id}, ${((Date.now() - oldest.createdAt) / 1000).toFixed(1)} s old` : "none"}`);
    if (deadShown > 0 && s.dead > 0) {
      console.log(`  dead, most recent first (${Math.min(deadShown, s.dead)} of ${s.dead}):`);
      for (const j of await mq.jobs(queue, "dead", { limit: deadShown })) {
        const when = j.buriedAt === undefined ? "" : new Date(j.buriedAt).toISOString();
        console.log(`    ${j.id}  ${when}  attempts ${j.attempts}  ${JSON.stringify(j.reason ?? "")}`);
      }
    }
    const scheds = await mq.schedulers(queue);
    console.log(`  schedulers${scheds.length === 0 ? ": none" : `, soonest first (${scheds.length}):`}`);
    const now = Date.now();
    for (const sc of scheds) {
      const next = sc.nextRun.getTime();
      console.log(`    ${JSON.stringify(sc.name)}  ${specWords(sc.spec)}  next ${utcText(next)} (${relative(next, now)})  runs ${sc.runs}`);
    }
    console.log(`  keys (slot ${ks.slot}, served by ${await target.ownerOf(ks.slot)}):`);
    const named = SHOWN_KEYS.map((type) => ks[type]);
    for (const k of [...named, `${ks.base}job:<id>`, `${ks.base}scheduler:<name>`]) console.log(`    ${k}`);
    return 0;
  } finally {
    await target.close();
  }
}
