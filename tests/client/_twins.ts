/**
 * The differential test's runner: one step of both twins (the Lua scripts' queue and the module's)
 * bracketed by the server's TIME, snapshots of their keyspaces, and a comparison of time values
 * that is exact whenever both twins provably read the same millisecond.
 *
 * Time: the scripts read the server's TIME, the module its own clock, so the twins' `now` agree
 * exactly when the step's batch (`TIME`, scripts, module, `TIME`) runs inside one millisecond of
 * the server (both TIMEs equal): the runner sends each batch just after a millisecond starts, so
 * most do, and a step whose batch spanned a millisecond is run again from the keyspaces before it
 * ({@link save}, {@link restore}) until one does (a few tries): so times — deadlines, parks, a rate's
 * next token, tokens — compare exactly, and a millisecond's rounding shows. Only a step that spanned
 * `d` ms at every try may write times up to `d` ms apart: from then on that run compares every time
 * value (≥ 2001 as ms, tokens as ms × 1000) within the largest such span, and sorted sets by member. Decisions never straddle an expiry: a short duration (30 ms) opens a
 * window around its end, and no step runs inside one (the runner waits it out).
 */
import { createHash } from "node:crypto";
import { Decoder } from "@valkey/valkey-glide";
import { type Connection } from "../../lib/client/connection.ts";
import { SCRIPTS } from "../../lib/lua/mod.ts";
import type { Verb } from "../../lib/wire/mod.ts";
import { entries, type Outcome, plain, sleep, streamEntries, wireBatch } from "./_harness.ts";

/** Times derived from now are past 2001 (ms); tokens start above now × 1000. */
const NOW_FLOOR = 1e12;
const TOKEN_FLOOR = 1e15;
/** How far from an expiry (ms) no step runs: more than a loaded machine's batch takes. */
const MARGIN_MS = 25;

/** One twin's keyspace: each key (the queue's name as `{Q}`) with its type and value. */
export type Snapshot = Record<string, { type: string; value: unknown; expires?: number }>;

/** The keyspace of `queue`, read in three round trips: SCAN, TYPE of every key, their values. */
export async function snapshot(raw: Connection, queue: string): Promise<Snapshot> {
  const route = `emq:{${queue}}:meta`;
  const keys = await queueKeys(raw, queue);
  if (keys.length === 0) return {};
  const types = (await raw.batch(keys.map((k) => ["TYPE", k]), route, false)).map((t) => String(plain(t)));
  const read = (key: string, type: string): string[] => {
    if (type === "hash") return ["HGETALL", key];
    if (type === "list") return ["LRANGE", key, "0", "-1"];
    if (type === "zset") return ["ZRANGE", key, "0", "-1", "WITHSCORES"];
    if (type === "stream") return ["XRANGE", key, "-", "+"];
    return ["GET", key];
  };
  // each key's value, then its expiry (a tombstone's: now + its life, a time like any other)
  const values = await raw.batch(keys.flatMap((k, i) => [read(k, types[i]!), ["PEXPIRETIME", k]]), route, false);
  const out: Snapshot = {};
  keys.forEach((key, i) => {
    const type = types[i]!;
    const v = values[2 * i];
    const expires = Number(values[2 * i + 1]);
    let value: unknown;
    if (type === "hash") value = Object.fromEntries(entries(v).sort((a, b) => (a[0] < b[0] ? -1 : 1)));
    else if (type === "list") value = (plain(v) as unknown[]).map(String);
    else if (type === "zset") value = entries(v);
    // the events stream: its entries' fields in order, not their ids (the server's time)
    else if (type === "stream") value = streamEntries(v);
    else value = `<${type}> ${String(plain(v))}`;
    out[key.split(`{${queue}}`).join("{Q}")] = { type, value: named(value, queue), ...(expires > 0 ? { expires } : {}) };
  });
  return out;
}

/** The keys of `queue`, sorted. */
async function queueKeys(raw: Connection, queue: string): Promise<string[]> {
  const route = `emq:{${queue}}:meta`;
  const keys: string[] = [];
  let cursor = "0";
  do {
    const reply = (await raw.command(["SCAN", cursor, "MATCH", `emq:{${queue}}:*`, "COUNT", "1000"], route)) as [unknown, unknown[]];
    cursor = String(plain(reply[0]));
    keys.push(...reply[1].map((k) => String(plain(k))));
  } while (cursor !== "0");
  return keys.sort();
}

/**
 * A history's latency histogram (`metrics`' `run`, `wait`) as its job count: its buckets and sum
 * come from each twin's tokens and clock, which differ once a step's twins read different ms.
 */
function latency(key: string, field: string, value: string): string {
  if (!key.endsWith(":metrics") || (field !== "run" && field !== "wait")) return value;
  const parts = value.split(" ");
  return `${parts.slice(0, -1).reduce((n, x) => n + Number(x), 0)} jobs`;
}

/** `value` with the twin's queue name written `{Q}` in its strings too (a flow's rows and entries name their queue). */
export function named(value: unknown, queue: string): unknown {
  if (typeof value === "string") return value.split(queue).join("{Q}");
  if (Array.isArray(value)) return value.map((v) => named(v, queue));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, named(v, queue)]));
  return value;
}

/**
 * Whether two numbers of the same kind of time are within `tol` ms; tokens (now × 1000 + a count)
 * within `tol` × 1000 and a whole number of ms apart: their counts must be the same.
 */
function close(m: number, s: number, tol: number): boolean {
  if (m === s) return true;
  if (tol === 0 || m < NOW_FLOOR || s < NOW_FLOOR) return false;
  if (Math.min(m, s) >= TOKEN_FLOOR) return Math.abs(m - s) <= tol * 1000 && (m - s) % 1000 === 0;
  return Math.abs(m - s) <= tol;
}

/**
 * The module's value `m` with each time in it replaced by the scripts' `s` where the two are
 * within `tol` ms (numbers, digit strings and the runs of digits inside strings alike), so that
 * `expect(near(m, s, tol)).toEqual(s)` shows only real differences. With `tol` 0 nothing changes.
 */
export function near(m: unknown, s: unknown, tol: number): unknown {
  if (tol === 0) return m;
  if (typeof m === "number" && typeof s === "number") return close(m, s, tol) ? s : m;
  if (typeof m === "string" && typeof s === "string") {
    const mp = m.split(/(\d{13,})/), sp = s.split(/(\d{13,})/);
    if (mp.length !== sp.length) return m;
    for (let i = 0; i < mp.length; i++) {
      if (i % 2 === 0 ? mp[i] !== sp[i] : !close(Number(mp[i]), Number(sp[i]), tol)) return m;
    }
    return s;
  }
  if (Array.isArray(m) && Array.isArray(s)) return m.map((x, i) => near(x, s[i], tol));
  if (m && s && typeof m === "object" && typeof s === "object") {
    const so = s as Record<string, unknown>;
    return Object.fromEntries(Object.entries(m as Record<string, unknown>).map(([k, v]) => [k, near(v, so[k], tol)]));
  }
  return m;
}

/**
 * Past a step whose twins read different milliseconds, sorted sets compare by member (scores within
 * tol) and latency histograms by their counts of jobs; exact before.
 */
export function loose(snap: Snapshot, tol: number): Snapshot {
  if (tol === 0) return snap;
  const out: Snapshot = {};
  for (const [k, v] of Object.entries(snap)) {
    const byMember = (a: [string, string], b: [string, string]): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
    if (v.type === "zset") out[k] = { ...v, value: [...(v.value as [string, string][])].sort(byMember) };
    else if (v.type === "hash") {
      out[k] = { ...v, value: Object.fromEntries(Object.entries(v.value as Record<string, string>).map(([f, x]) => [f, latency(k, f, x)])) };
    } else out[k] = v;
  }
  return out;
}

/** An expiry's possible times (server ms): no step runs within MARGIN_MS of them. */
export interface Window {
  lo: number;
  hi: number;
}

/** Wall-clock µs, as precise as the runtime gives it. */
const micros = (): number => (performance.timeOrigin + performance.now()) * 1000;

/** How long (µs) batches took from their send to the server's first TIME, the last few: their median is the lag expected. */
const lags: number[] = [];
const lag = (): number => lags.length === 0 ? 250 : [...lags].sort((a, b) => a - b)[lags.length >> 1]!;

/**
 * Waits until no window is near, then until a batch sent now reaches the server early in a
 * millisecond (by the lag learnt so far): then its four commands mostly run inside that one.
 */
export async function clear(windows: Window[]): Promise<void> {
  for (;;) {
    const now = Date.now();
    const w = windows.find((w) => now >= w.lo - MARGIN_MS && now <= w.hi + MARGIN_MS);
    if (!w) break;
    await sleep(w.hi + MARGIN_MS - now + 1);
  }
  // aimed 0.1–0.2 ms into a millisecond: a batch's four commands take 0.1–0.6 ms
  const expected = lag();
  for (;;) {
    const phase = (micros() + expected) % 1000;
    if (phase >= 100 && phase <= 200) break;
  }
}

/** The server's TIME reply in µs. */
function us(o: Outcome): number {
  if (!("ok" in o) || !Array.isArray(o.ok)) throw new Error(`not a TIME reply: ${JSON.stringify(o)}`);
  const [sec, usec] = (o.ok as unknown[]).map(Number);
  return sec! * 1e6 + usec!;
}

/** Both twins' calls in one batch between two TIMEs: their replies and the server's ms before and after. */
export async function twinBatch(
  raw: Connection,
  route: string,
  scripts: Array<string | Buffer>,
  module: Array<string | Buffer>,
): Promise<{ scripts: Outcome; module: Outcome; t0: number; t1: number }> {
  const sent = micros();
  const r = await wireBatch(raw, route, [["TIME"], scripts, module, ["TIME"]]);
  const [t0, t1] = [us(r[0]!), us(r[3]!)];
  lags.push(t0 - sent);
  if (lags.length > 15) lags.shift();
  return { scripts: r[1]!, module: r[2]!, t0: Math.floor(t0 / 1000), t1: Math.floor(t1 / 1000) };
}

const SHAS = Object.fromEntries(Object.entries(SCRIPTS).map(([verb, body]) => [verb, createHash("sha1").update(body as string).digest("hex")]));

/** Loads every script on the node of `route` (EVALSHA then sends no script body: a batch fits in a millisecond more often). */
export async function loadScripts(raw: Connection, route: string): Promise<void> {
  await raw.batch(Object.values(SCRIPTS).map((body) => ["SCRIPT", "LOAD", body as string]), route, false);
}

/** The scripts twin's call as EVALSHA (after {@link loadScripts}). */
export function evalsha(verb: Verb, keys: string[], args: string[]): string[] {
  return ["EVALSHA", SHAS[verb]!, String(keys.length), ...keys, ...args];
}

/** A twin's keys as DUMP gave them, each with its absolute expiry (ms; 0: none): what a retried step starts from. */
export type Saved = Array<{ key: string; dump: Uint8Array; at: number }>;

/** The keys of `snap` (a snapshot of `queue`) dumped, so that {@link restore} can put them back. */
export async function save(raw: Connection, queue: string, snap: Snapshot): Promise<Saved> {
  const keys = Object.keys(snap).map((k) => k.replace("{Q}", `{${queue}}`));
  if (keys.length === 0) return [];
  const route = `emq:{${queue}}:meta`;
  const r = await raw.batch(keys.flatMap((k) => [["DUMP", k], ["PEXPIRETIME", k]]), route, false, 0, Decoder.Bytes);
  return keys.map((key, i) => ({ key, dump: r[2 * i] as Uint8Array, at: Math.max(0, Number(r[2 * i + 1])) }));
}

/** Puts `queue`'s keyspace back as {@link save} found it: every key of the queue deleted, the saved ones restored, in one transaction. */
export async function restore(raw: Connection, queue: string, saved: Saved): Promise<void> {
  const route = `emq:{${queue}}:meta`;
  const now = await queueKeys(raw, queue);
  const commands: Array<Array<string | Uint8Array>> = now.map((k) => ["DEL", k]);
  for (const { key, dump, at } of saved) {
    commands.push(at > 0 ? ["RESTORE", key, String(at), dump, "ABSTTL", "REPLACE"] : ["RESTORE", key, "0", dump, "REPLACE"]);
  }
  if (commands.length > 0) await raw.batch(commands as Array<Array<string | Buffer>>, route, true);
}
