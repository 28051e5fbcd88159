/**
 * `GET /metrics`: every queue's counts, paused state and totals, the age of its oldest pending job,
 * its wait-time and run-time histograms
 * (and its schedulers': see `scheduler_metrics.ts`) in the Prometheus text exposition
 * format (version 0.0.4): a `# HELP` and a `# TYPE` line per metric family, one sample per queue
 * (and per state), label values escaped as the format says (backslash, double quote, newline).
 *
 * @module
 */
import type { FlowStats, QueueMetrics, QueueStats } from "../client/mod.ts";
import { COUNTED_STATES } from "./json_api.ts";
import type { Route } from "./route_table.ts";
import type { Discovery } from "./discovery.ts";
import { countsView } from "./queue_rows.ts";
import type { StatsSnapshot } from "./snapshot.ts";
import { answer, plain } from "./responses.ts";
import { schedulerExposition } from "./scheduler_metrics.ts";

/** The exposition format's content type. */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** A label value as the format writes it between double quotes: `\` → `\\`, `"` → `\"`, newline → `\n`. */
export function escapeLabel(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`));
}

/** HELP text as the format writes it: `\` → `\\`, newline → `\n`. */
function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === "\n" ? "\\n" : "\\\\"));
}

/** One metric family: its name, type, help, and how a queue's stats give its samples. */
interface Family {
  readonly name: string;
  readonly type: "gauge" | "counter";
  readonly help: string;
  samples(s: QueueStats): Array<[labels: string, value: number]>;
}

const counter = (name: string, help: string, value: (s: QueueStats) => number): Family => ({
  name,
  type: "counter",
  help,
  samples: (s) => [["", value(s)]],
});

/** The families, in the order they are written. */
export const FAMILIES: readonly Family[] = [
  {
    name: "echomq_jobs",
    type: "gauge",
    help: "Jobs in each state of a queue (pending, active, scheduled, dead, completed: those kept with their results; " +
      "waiting-children: flow parents waiting for their children).",
    samples: (s) => {
      const counts = countsView(s);
      return [...COUNTED_STATES.map((state): [string, number] => [`,state="${state}"`, counts[state]]), [`,state="waiting-children"`, s.waitingChildren]];
    },
  },
  {
    name: "echomq_paused",
    type: "gauge",
    help: "1 while the queue is paused (claims hand out nothing), else 0.",
    samples: (s) => [["", s.paused ? 1 : 0]],
  },
  {
    name: "echomq_concurrency_limit",
    type: "gauge",
    help: "The most jobs of the queue active at once across every worker (mq.limit); absent when none.",
    samples: (s) => (s.limits.concurrency === null ? [] : [["", s.limits.concurrency]]),
  },
  {
    name: "echomq_rate_limit_per_second",
    type: "gauge",
    help: "Claims per second the queue's rate limit allows on average (mq.limit); absent when none.",
    samples: (s) => (s.limits.rate === null ? [] : [["", (s.limits.rate.max * 1000) / s.limits.rate.perMs]]),
  },
  {
    name: "echomq_parked",
    type: "gauge",
    help: "1 while the queue is parked (mq.penalize, a handler's RateLimitedError: claims hand out nothing), else 0.",
    samples: (s) => [["", s.limits.parkedUntil === null ? 0 : 1]],
  },
  {
    name: "echomq_lanes",
    type: "gauge",
    help: "Lanes of the queue with a state (mq.lanes), the default lane included once it has one; per-lane series are left " +
      "out (a lane per tenant would be a series per tenant).",
    samples: (s) => [["", s.lanes]],
  },
  counter("echomq_enqueued_total", "Jobs admitted to the queue (enqueued or scheduled).", (s) => s.enqueued),
  counter("echomq_acked_total", "Jobs acked.", (s) => s.acked),
  counter("echomq_retried_total", "Failed attempts handed back for a retry.", (s) => s.retried),
  counter("echomq_buried_total", "Jobs buried (moved to dead).", (s) => s.buried),
  counter("echomq_claims_total", "Jobs claimed so far (meta's claimed).", (s) => s.claims),
];

/** What a scrape exports besides the queues: the snapshot's age, and the names no call can read. */
export interface ExpositionExtra {
  /** Seconds since the snapshot was taken. */
  readonly ageSeconds: number;
  /** `meta` keys whose name is not UTF-8, escaped. */
  readonly unreadable: readonly string[];
}

/** The exposition of `queues` (name and stats), every family even when there is no queue. */
export function exposition(queues: ReadonlyArray<readonly [string, QueueStats]>, extra: ExpositionExtra = { ageSeconds: 0, unreadable: [] }): string {
  const lines: string[] = [];
  for (const f of FAMILIES) {
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    for (const [queue, stats] of queues) {
      for (const [labels, value] of f.samples(stats)) lines.push(`${f.name}{queue="${escapeLabel(queue)}"${labels}} ${value}`);
    }
  }
  lines.push(
    "# HELP echomq_snapshot_age_seconds Seconds since the stats above were read (they are read in the background).",
    "# TYPE echomq_snapshot_age_seconds gauge",
    `echomq_snapshot_age_seconds ${extra.ageSeconds.toFixed(3)}`,
    "# HELP echomq_unreadable_queue A queue whose name is not UTF-8 text (no call can name it), its meta key escaped.",
    "# TYPE echomq_unreadable_queue gauge",
    ...extra.unreadable.map((key) => `echomq_unreadable_queue{key="${escapeLabel(key)}"} 1`),
  );
  return `${lines.join("\n")}\n`;
}

/**
 * `echomq_oldest_pending_age_seconds`: per queue, how long its pending head (the job claimed next)
 * has waited at `now` since it was admitted or fell due, from the row the server keeps; 0 when none
 * is pending. A queue-lag alert's gauge.
 */
export function oldestExposition(oldest: ReadonlyArray<readonly [string, number | null]>, now: number): string {
  const lines = [
    "# HELP echomq_oldest_pending_age_seconds Seconds the job a queue hands out next has waited since it was admitted or " +
    "fell due (0: none pending).",
    "# TYPE echomq_oldest_pending_age_seconds gauge",
    ...oldest.map(([q, at]) => `echomq_oldest_pending_age_seconds{queue="${escapeLabel(q)}"} ${at === null ? 0 : Math.max(0, (now - at) / 1000).toFixed(3)}`),
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * `echomq_wait_seconds` (admitted or due → claimed) and `echomq_run_seconds` (claimed → settled)
 * per queue: Prometheus histograms of the counts the server keeps (`mq.metrics`' latency, written
 * by the settles), cumulative as the format wants them, `le` in seconds.
 */
export function latencyExposition(latency: ReadonlyArray<readonly [string, QueueMetrics["latency"]]>): string {
  const lines: string[] = [];
  const families = [
    ["echomq_wait_seconds", "wait", "Seconds a job waited from when it was admitted or fell due to its claim (jobs settled so far)."],
    ["echomq_run_seconds", "run", "Seconds from a job's claim to its settle (ack, retry or bury; jobs settled so far)."],
  ] as const;
  for (const [name, kind, help] of families) {
    lines.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} histogram`);
    for (const [queue, l] of latency) {
      const h = l[kind];
      const q = `queue="${escapeLabel(queue)}"`;
      let below = 0;
      h.boundsMs.forEach((b, i) => {
        below += h.counts[i]!;
        lines.push(`${name}_bucket{${q},le="${b / 1000}"} ${below}`);
      });
      lines.push(`${name}_bucket{${q},le="+Inf"} ${h.count}`, `${name}_sum{${q}} ${h.sumMs / 1000}`, `${name}_count{${q}} ${h.count}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/**
 * `echomq_waiting_parents`, `echomq_outbox_entries` and `echomq_relay_lag_seconds` per queue: its
 * flows' parents waiting for children, its outbox's length, and how long its oldest entry no relay
 * holds has waited (0: none, or all in flight) — an alert on the lag finds a queue nobody relays.
 */
export function flowsExposition(flows: ReadonlyArray<readonly [string, FlowStats]>): string {
  const families = [
    ["echomq_waiting_parents", "Flow parents of the queue waiting for their children (waiting-children).", (f: FlowStats) => f.waitingParents],
    [
      "echomq_outbox_entries",
      "Entries in the queue's outbox: children to create, outcomes and cancels to deliver in other queues.",
      (f: FlowStats) => f.outbox,
    ],
    [
      "echomq_relay_lag_seconds",
      "Seconds the queue's oldest outbox entry no relay holds has waited (0: none, or every entry in flight); grows when no relay serves the queue.",
      (f: FlowStats) => f.relayLagMs / 1000,
    ],
  ] as const;
  const lines: string[] = [];
  for (const [name, help, value] of families) {
    lines.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} gauge`);
    for (const [q, f] of flows) lines.push(`${name}{queue="${escapeLabel(q)}"} ${value(f)}`);
  }
  return `${lines.join("\n")}\n`;
}

/** `GET /metrics`, answered from the background snapshot (snapshot.ts). */
export function metricsRoute(snapshot: StatsSnapshot, discovery: Discovery): Route {
  return {
    path: "/metrics",
    handle: async () => {
      try {
        const snap = await snapshot.read();
        const queues = exposition(snap.stats, { ageSeconds: (Date.now() - snap.at) / 1000, unreadable: discovery.unreadable });
        const lag = oldestExposition(snap.oldest, Date.now()) + latencyExposition(snap.latency) + flowsExposition(snap.flows);
        return answer(queues + lag + schedulerExposition(snap.schedulers), METRICS_CONTENT_TYPE);
      } catch (e) {
        const text = e instanceof Error ? e.message : String(e);
        return plain(502, `# the server did not answer: ${text.split("\n")[0]}`);
      }
    },
  };
}
