/**
 * When a scheduler runs, computed on the client (the server only keeps the times and refuses a
 * tick that is not the one it holds): a spec — `{ everyMs }` or `{ cron, tz? }` — checked and
 * turned into the text the server stores (`every <ms>`, `cron <pattern>[ tz=<zone>]`), read back
 * from that text, and the runs due between a scheduler's next run and now under its missed-tick
 * policy. Cron patterns and time zones (DST included) are croner's.
 *
 * @module
 */
import { Cron } from "croner";
import { MAX_BATCH, MAX_SPEC_BYTES, MAX_WIRE_NUMBER } from "../wire/mod.ts";
import { SchedulerOptionError } from "./errors.ts";

/** When a scheduler runs: every `everyMs` ms, or on a cron pattern (5 to 7 fields) in time zone `tz` (IANA; default UTC). */
export type RepeatSpec = { readonly everyMs: number } | { readonly cron: string; readonly tz?: string };

/**
 * What happens to runs missed while no worker fired (all workers down, the queue paused): `latest`
 * (default) runs once, for the latest missed run; `skip` runs none of them (a run that is merely
 * due still runs); `{ max: N }` runs the N latest (1 to 10000).
 */
export type MissedPolicy = "latest" | "skip" | { readonly max: number };

/** A checked spec: the text the server stores, and the first run strictly after a time. */
export interface Repeat {
  /** The server's text of the spec. */
  readonly text: string;
  /** The spec as given. */
  readonly spec: RepeatSpec;
  /** The first run strictly after `now`, on the grid of runs through `from` (a run; ms since the epoch). */
  after(from: number, now: number): number;
  /** The latest runs ≤ `now` and ≥ `from`, at most `n`, ascending. */
  latest(from: number, now: number, n: number): number[];
  /** How many runs lie in [`from`, `now`] (counting stops past `cap`). */
  count(from: number, now: number, cap: number): number;
}

const refuse = (option: "cron" | "tz" | "everyMs" | "spec", message: string, cause?: unknown): never => {
  throw new SchedulerOptionError(option, `upsertScheduler: ${message}`, cause);
};

function every(everyMs: unknown): Repeat {
  if (typeof everyMs !== "number" || !Number.isSafeInteger(everyMs) || everyMs < 1 || everyMs > MAX_WIRE_NUMBER) {
    refuse("everyMs", `everyMs must be an integer of ms from 1 to ${MAX_WIRE_NUMBER}, got ${String(everyMs)}`);
  }
  const e = everyMs as number;
  // runs are anchored on the scheduler's own next run: from + k·everyMs
  return {
    text: `every ${e}`,
    spec: { everyMs: e },
    after: (from, now) => (now < from ? from : from + (Math.floor((now - from) / e) + 1) * e),
    latest: (from, now, n) => {
      if (now < from || n <= 0) return [];
      const last = from + Math.floor((now - from) / e) * e;
      const out: number[] = [];
      for (let t = last; t >= from && out.length < n; t -= e) out.unshift(t);
      return out;
    },
    count: (from, now) => (now < from ? 0 : Math.floor((now - from) / e) + 1),
  };
}

function cron(pattern: unknown, tz: unknown): Repeat {
  if (typeof pattern !== "string" || pattern.trim() === "" || /[\r\n]/.test(pattern)) {
    refuse("cron", `cron must be a cron pattern (5 to 7 fields), got ${JSON.stringify(pattern)}`);
  }
  if (tz !== undefined && (typeof tz !== "string" || tz === "" || /\s/.test(tz))) {
    refuse("tz", `tz must be an IANA time zone name (Europe/Berlin), got ${JSON.stringify(tz)}`);
  }
  const p = (pattern as string).trim().replace(/\s+/g, " ");
  let c: Cron;
  try {
    c = new Cron(p, { paused: true, ...(tz === undefined ? { timezone: "Etc/UTC" } : { timezone: tz as string }) });
  } catch (e) {
    return refuse("cron", `cron ${JSON.stringify(pattern)} is not a cron pattern: ${(e as Error).message}`, e);
  }
  try {
    c.nextRun();
  } catch (e) {
    return refuse("tz", `tz ${JSON.stringify(tz)} is not a known time zone: ${(e as Error).message}`, e);
  }
  const next = (ms: number): number => {
    const d = c.nextRun(new Date(ms));
    return d === null ? refuse("cron", `cron ${JSON.stringify(p)} has no run after ${new Date(ms).toISOString()}`) : d.getTime();
  };
  return {
    text: tz === undefined ? `cron ${p}` : `cron ${p} tz=${tz as string}`,
    spec: tz === undefined ? { cron: p } : { cron: p, tz: tz as string },
    after: (_from, now) => next(now),
    // croner's previous runs exclude the reference itself: now + 1 takes a run at now
    latest: (from, now, n) => n <= 0 || now < from ? [] : c.previousRuns(n, new Date(now + 1)).map((d) => d.getTime()).filter((t) => t >= from).reverse(),
    count: (from, now, cap) => {
      let k = 0;
      for (let t = from; t <= now && k < cap; t = next(t)) k++;
      return k;
    },
  };
}

/** Checks a spec (a {@link SchedulerOptionError} names the option) and returns its {@link Repeat}. */
export function repeat(spec: RepeatSpec): Repeat {
  if (spec === null || typeof spec !== "object") return refuse("spec", "spec must be { everyMs } or { cron, tz? }");
  const r = "everyMs" in spec ? every(spec.everyMs) : "cron" in spec ? cron(spec.cron, spec.tz) : refuse("spec", "spec must be { everyMs } or { cron, tz? }");
  if (new TextEncoder().encode(r.text).length > MAX_SPEC_BYTES) refuse("spec", `the spec must be at most ${MAX_SPEC_BYTES} bytes`);
  return r;
}

/** The {@link Repeat} of a spec's stored text (another process may have written it); null when unreadable. */
export function fromText(text: string): Repeat | null {
  try {
    const e = /^every (\d+)$/.exec(text);
    if (e) return every(Number(e[1]));
    const c = /^cron (.+?)(?: tz=(\S+))?$/.exec(text);
    return c ? cron(c[1], c[2]) : null;
  } catch {
    return null;
  }
}

/** A missed-tick policy as the server's `max_missed`: latest 1, skip 0, `{ max: N }` N. */
export function maxMissed(policy: MissedPolicy | undefined): number {
  if (policy === undefined || policy === "latest") return 1;
  if (policy === "skip") return 0;
  const max = (policy as { max?: unknown } | null)?.max;
  if (typeof max === "number" && Number.isSafeInteger(max) && max >= 1 && max <= MAX_BATCH) return max;
  throw new SchedulerOptionError("missed", `upsertScheduler: missed must be "latest", "skip" or { max: 1 to ${MAX_BATCH} }, got ${JSON.stringify(policy)}`);
}

/** The policy of a stored `max_missed`. */
export function policyOf(max: number): MissedPolicy {
  return max === 1 ? "latest" : max === 0 ? "skip" : { max };
}

/** One firing: the runs to admit a job for (ascending) and the next run after now. */
export interface Firing {
  /** The runs fired, ascending (empty: every due run is skipped). */
  readonly ticks: number[];
  /** The first run after `now`. */
  readonly next: number;
}

/**
 * What a firer sends for a scheduler whose next run `nextMs` is due by `now`: a run that is merely
 * due (the only one since `nextMs`) always runs; when runs were missed, the `max` latest of them
 * run (`max_missed`: 1 latest, 0 skip). Null when nothing is due.
 */
export function firing(r: Repeat, nextMs: number, now: number, max: number): Firing | null {
  if (nextMs > now) return null;
  const count = r.count(nextMs, now, 2);
  const n = count <= 1 ? 1 : max;
  return { ticks: r.latest(nextMs, now, n), next: r.after(nextMs, now) };
}
