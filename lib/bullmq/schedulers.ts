/**
 * BullMQ's job schedulers on EchoMQ's own (docs/design/bullmq.md, "Job schedulers"): a BullMQ
 * scheduler is an EchoMQ scheduler of the same name (`emq:{q}:scheduler:<id>`, SCHEDULER, TICK,
 * UNSCHEDULE), so `mq.schedulers`, `emq ui` and the CLI see it and an EchoMQ worker fires it too.
 * Its payload is a scheduler envelope (no id: each run is BullMQ job "its EchoMQ id") carrying the
 * template's name, data and options, with `repeat` and `repeatJobKey` as BullMQ's worker reads them.
 * A backend that claims (a BullMQ `Worker`'s) fires the due schedulers on a timer, as EchoMQ's
 * worker does: TICK admits the run's job, which wakes the waiting claims by itself.
 *
 * @module
 */
import { Decoder } from "@valkey/valkey-glide";
import type { JobsOptions } from "bullmq";
import { encodePayload, toWire } from "../client/codec.ts";
import { SchedulerOptionError } from "../client/errors.ts";
import { fields, scored } from "../client/info.ts";
import { type EnqueueOptions, jobOptions } from "../client/options.ts";
import { FIRE_POLL_MS, fireDue } from "../client/schedulers.ts";
import { fromText, type Repeat, repeat } from "../client/repeat.ts";
import { validName } from "../keyspace/mod.ts";
import { SCHED, wireCall } from "../wire/mod.ts";
import { envelopeIn } from "./envelope.ts";
import { refuse, WHY } from "./refused.ts";
import type { Scope } from "./scope.ts";

/** EchoMQ's highest priority number; BullMQ's 2²¹ is read as this. */
const MAX_PRIORITY = 2_097_151;

/** BullMQ's repeat options as `addJobScheduler` gets them. */
export interface BullRepeat {
  /** The jobs' name (the template's). */
  readonly name?: string;
  /** Runs every this many ms. */
  readonly every?: number;
  /** Runs on this cron pattern. */
  readonly pattern?: string;
  /** The pattern's time zone. */
  readonly tz?: string;
  /** No run before this time (ms). */
  readonly startDate?: number;
  /** No run after this time (ms): refused. */
  readonly endDate?: number;
  /** At most this many runs: refused. */
  readonly limit?: number;
  /** `every`'s runs aligned on multiples of `every` plus this many ms. */
  readonly offset?: number | null;
}

/** The server's time, ms. */
async function serverNow(s: Scope): Promise<number> {
  const { c, ks } = await s.on();
  const [sec, us] = (await c.conn.command(["TIME"], ks.meta)) as unknown[];
  return Number(String(sec)) * 1000 + Math.floor(Number(String(us)) / 1000);
}

/** The EchoMQ spec of BullMQ's repeat options, checked (croner's pattern and zone): refused by name, before any write. */
function specOf(r: BullRepeat): Repeat {
  try {
    return r.pattern ? repeat(r.tz ? { cron: r.pattern, tz: r.tz } : { cron: r.pattern }) : repeat({ everyMs: Number(r.every) });
  } catch (e) {
    if (!(e instanceof SchedulerOptionError)) throw e;
    return refuse(`addJobScheduler (${r.pattern ? (e.option === "tz" ? "tz" : "pattern") : "every"})`, e.message);
  }
}

/** The options every run's job carries on EchoMQ (name, priority): checked before any write. */
function runOptions(name: string, t: JobsOptions): string {
  if (t.lifo) refuse("addJobScheduler (opts.lifo)", WHY.lifo);
  if (t.parent !== undefined) refuse("addJobScheduler (opts.parent)", WHY.flows);
  if (t.deduplication !== undefined) {
    refuse("addJobScheduler (opts.deduplication)", "a scheduler's runs are its own deduplication: one job per run (TICK is compare-and-set)");
  }
  const o: { -readonly [K in keyof EnqueueOptions]: EnqueueOptions[K] } = {};
  if (name.length > 0 && validName(name)) o.name = name;
  if ((t.priority ?? 0) > 0) o.priority = Math.min(t.priority!, MAX_PRIORITY);
  return jobOptions("addJobScheduler", o);
}

/**
 * The first run: a pattern's is BullMQ's `nextMillis` (cron-parser's, honouring `startDate`, `tz` and
 * `immediately`); `every`'s as BullMQ's script computes it, on the server's clock — `startDate` (or
 * now, when past), else the next multiple of `every` plus `offset`, else now.
 */
function firstRun(r: BullRepeat, nextMillis: number, now: number): number {
  if (r.pattern) return Math.max(Math.trunc(nextMillis) || now, now);
  const every = Number(r.every);
  if (r.startDate !== undefined && r.startDate !== null) return Math.max(Number(r.startDate), now);
  if (r.offset) {
    const aligned = Math.floor(now / every) * every + Number(r.offset);
    return aligned <= now ? aligned + every : aligned;
  }
  return now;
}

/**
 * BullMQ's `addJobScheduler` (an upsert): SCHEDULER of the envelope, first run as BullMQ's; a run
 * due now is fired at once by a TICK (BullMQ adds the first run's job on upsert), and its job's id
 * answered. A first run later answers BullMQ's name of that run, `repeat:<id>:<ms>`, with its delay:
 * its job does not exist until a worker fires it. `limit` and `endDate` are refused (an EchoMQ
 * scheduler runs until removed), before any write.
 */
export async function addJobScheduler(
  s: Scope,
  id: string,
  nextMillis: number,
  templateData: string,
  templateOpts: JobsOptions,
  r: BullRepeat,
): Promise<[string, number]> {
  if (!validName(id)) {
    refuse("addJobScheduler (id)", `a scheduler id must pass EchoMQ's name rule (1 to 1024 bytes, no "{", "}" or NUL), got ${JSON.stringify(id)}`);
  }
  if (r.limit !== undefined && r.limit !== null) refuse("addJobScheduler (limit)", WHY.schedulerEnds);
  if (r.endDate !== undefined && r.endDate !== null) refuse("addJobScheduler (endDate)", WHY.schedulerEnds);
  const spec = specOf(r);
  const name = r.name ?? id;
  const options = runOptions(name, templateOpts ?? {});
  const { jobId: _j, delay: _d, timestamp: _t, prevMillis: _p, repeat: _r, repeatJobKey: _k, ...template } = (templateOpts ?? {}) as
    & JobsOptions
    & Record<string, unknown>;
  const repeatOpts = {
    ...(r.every ? { every: r.every } : { pattern: r.pattern }),
    ...(r.tz ? { tz: r.tz } : {}),
    ...(r.offset ? { offset: r.offset } : {}),
    ...(r.startDate ? { startDate: r.startDate } : {}),
    count: 1,
  };
  const envelope = { bullmq: 1, name, data: JSON.parse(templateData || "{}"), opts: { ...template, repeat: repeatOpts, repeatJobKey: id } };
  const { c, ks } = await s.on();
  const payload = toWire(encodePayload(c.codec, envelope, "addJobScheduler"));
  const now = await serverNow(s);
  const first = firstRun(r, nextMillis, now);
  const call = wireCall("SCHEDULER", ks, { name: id, spec: spec.text, next_ms: first, max_missed: 1, opts: options, payload });
  const next = Number(await c.impl.call(call));
  if (next === first && first <= now) {
    const job = c.id();
    const fired = Number(
      await c.impl.call(wireCall("TICK", ks, { name: id, expected_ms: first, next_ms: spec.after(first, now) }, [{ id: job, tick_ms: first }])),
    );
    if (fired === 1) return [job, 0];
  }
  return [`repeat:${id}:${next}`, Math.max(0, next - now)];
}

/** BullMQ's `removeJobScheduler`: UNSCHEDULE — 0 removed, 1 there was none (BullMQ's script's answer). Jobs already admitted stay. */
export async function removeJobScheduler(s: Scope, id: string): Promise<number> {
  if (!validName(id)) return 1;
  const { c, ks } = await s.on();
  return Number(await c.impl.call(wireCall("UNSCHEDULE", ks, { name: id }))) === 1 ? 0 : 1;
}

/** BullMQ's fields of a scheduler (`name`, `ic`, `every`/`pattern`, `tz`, `offset`, `startDate`, `data`, `opts`), and its next run. */
async function read(s: Scope, id: string): Promise<{ data: Record<string, string>; next: number } | null> {
  if (!validName(id)) return null;
  const { c, ks } = await s.on();
  const reply = await c.conn.command(["HGETALL", ks.scheduler(id)], ks.meta, Decoder.Bytes);
  const m = fields(reply as Parameters<typeof fields>[0]);
  const text = (f: string): string | undefined => {
    const v = m.get(f);
    return v === undefined ? undefined : new TextDecoder().decode(v);
  };
  const next = Number(text(SCHED.next_ms));
  if (!Number.isSafeInteger(next)) return null;
  const out: Record<string, string> = { ic: text(SCHED.runs) ?? "0" };
  const spec = fromText(text(SCHED.spec) ?? "")?.spec;
  if (spec !== undefined && "everyMs" in spec) out.every = String(spec.everyMs);
  else if (spec !== undefined) {
    out.pattern = spec.cron;
    if (spec.tz !== undefined) out.tz = spec.tz;
  }
  let payload: unknown;
  try {
    payload = c.codec.decode(m.get(SCHED.payload) ?? new Uint8Array());
  } catch {
    payload = undefined;
  }
  const e = envelopeIn(payload, "", 0);
  if (e === null) {
    // an EchoMQ scheduler (`mq.upsertScheduler`): its payload is the data
    out.name = id;
    out.data = JSON.stringify(payload ?? null);
    return { data: out, next };
  }
  const { repeat: rep, repeatJobKey: _k, ...template } = e.opts as JobsOptions & { repeat?: { offset?: number; startDate?: number } };
  out.name = e.name;
  out.data = JSON.stringify(e.data === undefined ? {} : e.data);
  out.opts = JSON.stringify(template);
  if (rep?.offset) out.offset = String(rep.offset);
  if (rep?.startDate) out.startDate = String(rep.startDate);
  return { data: out, next };
}

/** BullMQ's `getJobScheduler`: its fields as a flat list, and its next run (nulls when there is none). */
export async function getJobScheduler(s: Scope, id: string): Promise<[string[] | null, string | null]> {
  const r = await read(s, id);
  return r === null ? [null, null] : [Object.entries(r.data).flat(), String(r.next)];
}

/** BullMQ's `getJobSchedulerData`: its fields ({} when there is none). */
export async function getJobSchedulerData(s: Scope, id: string): Promise<Record<string, string>> {
  return (await read(s, id))?.data ?? {};
}

/** BullMQ's `isJobScheduler`: whether the queue has a scheduler of that id. */
export async function isJobScheduler(s: Scope, id: string): Promise<boolean> {
  if (!validName(id)) return false;
  const { c, ks } = await s.on();
  return (await c.conn.command(["ZSCORE", ks.schedulers, id], ks.meta)) !== null;
}

/** BullMQ's `getJobSchedulersRange`: `[id, next, id, next, …]` by next run. */
export async function getJobSchedulersRange(s: Scope, start: number, end: number, asc: boolean): Promise<string[]> {
  const { c, ks } = await s.on();
  const reply = await c.conn.command(["ZRANGE", ks.schedulers, String(start), String(end), ...(asc ? [] : ["REV"]), "WITHSCORES"], ks.meta);
  return scored(reply as Parameters<typeof scored>[0]).flatMap(([id, next]) => [id, String(next)]);
}

/** BullMQ's `getJobSchedulersCount`. */
export async function getJobSchedulersCount(s: Scope): Promise<number> {
  const { c, ks } = await s.on();
  return Number(await c.conn.command(["ZCARD", ks.schedulers], ks.meta));
}

/**
 * Fires the queue's due schedulers while started, as EchoMQ's worker does (`fireDue`: one TICK per
 * due scheduler, compare-and-set, so racing firers make one job per run): looks again when the next
 * run is due, at least every second. A firing that fails is reported once per distinct message and
 * tried again a second later.
 */
export class Firer {
  readonly #s: Scope;
  readonly #report: (e: unknown) => void;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #firing: Promise<void> = Promise.resolve();
  #started = false;
  #stopped = false;
  #lastError: string | null = null;

  /** The firer of backend scope `s`, reporting failures to `report`. */
  constructor(s: Scope, report: (e: unknown) => void) {
    this.#s = s;
    this.#report = report;
  }

  /** Starts firing (once; a stopped firer stays stopped). */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    this.#in(0);
  }

  #in(ms: number): void {
    this.#timer = setTimeout(() => {
      this.#firing = (async () => {
        if (this.#stopped) return;
        let wait = FIRE_POLL_MS;
        try {
          const { c, ks } = await this.#s.on();
          wait = await fireDue(c, ks, FIRE_POLL_MS);
          this.#lastError = null;
        } catch (e) {
          if (this.#stopped) return;
          const text = e instanceof Error ? e.message : String(e);
          if (text !== this.#lastError) this.#report(e);
          this.#lastError = text;
        }
        if (!this.#stopped) this.#in(wait);
      })();
    }, ms);
  }

  /** Stops firing; resolves once a firing in flight is done. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    await this.#firing;
  }
}
