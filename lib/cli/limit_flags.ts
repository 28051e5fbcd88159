/**
 * `emq limit`'s flags as `mq.limit` options, parsed strictly (a refusal names the flag, exit 2):
 * `--concurrency N|none`, `--rate MAX/PERIOD|none` (PERIOD a count and a unit — `1s`, `500ms`,
 * `1m`, `2h`; the count may be left out: `10/s`) and `--burst B`, which goes with a
 * `--rate MAX/PERIOD`. A flag left out keeps its limit and `none` removes it, as with `mq.limit`.
 * The ranges are the wire's, so a value the server would refuse is refused here, by its flag.
 * `--lane L` or `--per-lane` says whose limits (`emq limits` too): a lane's own, or every lane's
 * default; neither: the queue's.
 *
 * @module
 */
import type { LimitOptions, LimitTarget } from "../client/mod.ts";
import { MAX_BURST, MAX_CONCURRENCY, MAX_RATE, MAX_RATE_PERIOD_MS } from "../wire/mod.ts";
import { UsageError } from "./usage.ts";

/** A period's units, ms each (`m` is a minute, as in `1m`). */
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000 };

/** `text` as a whole number from 1 to `max`, or null when it is not one. */
function whole(text: string, max: number): number | null {
  if (!/^[1-9][0-9]{0,15}$/.test(text)) return null;
  const n = Number(text);
  return n <= max ? n : null;
}

/** `--concurrency`'s value: null for `none`. */
export function concurrencyFlag(text: string): number | null {
  if (text === "none") return null;
  const n = whole(text, MAX_CONCURRENCY);
  if (n === null) throw new UsageError(`--concurrency must be an integer from 1 to ${MAX_CONCURRENCY}, or none; not ${JSON.stringify(text)}`);
  return n;
}

/** `--rate`'s value (`MAX/PERIOD`) with `--burst`'s: null for `none`. */
export function rateFlag(text: string, burst: string | undefined): { max: number; perMs: number; burst?: number } | null {
  if (text === "none") {
    if (burst !== undefined) throw new UsageError("--burst goes with --rate MAX/PERIOD, not --rate none");
    return null;
  }
  const m = /^([0-9]+)\/([0-9]*)(ms|s|min|m|h)$/.exec(text);
  const max = m === null ? null : whole(m[1]!, MAX_RATE);
  const count = m === null ? null : m[2] === "" ? 1 : whole(m[2]!, MAX_RATE_PERIOD_MS);
  const perMs = count === null ? null : count * UNIT_MS[m![3]!]!;
  if (max === null || perMs === null || perMs > MAX_RATE_PERIOD_MS) {
    throw new UsageError(
      `--rate must be MAX/PERIOD (MAX from 1 to ${MAX_RATE}; PERIOD from 1ms to 24h, as 500ms, 1s, 1m, 2h) or none; not ${JSON.stringify(text)}`,
    );
  }
  if (burst === undefined) return { max, perMs };
  const b = whole(burst, MAX_BURST);
  if (b === null) throw new UsageError(`--burst must be an integer from 1 to ${MAX_BURST}; not ${JSON.stringify(burst)}`);
  return { max, perMs, burst: b };
}

/**
 * The target `--lane L` / `--per-lane` ask for, with how the output line says it; undefined (the
 * queue) when neither is given. The lane name itself is checked by the client, before any wire.
 */
export function laneTarget(values: { lane?: string | undefined; "per-lane"?: boolean | undefined }): { target: LimitTarget; says: string } | undefined {
  if (values.lane !== undefined && values["per-lane"] === true) throw new UsageError("--lane and --per-lane: one or the other");
  if (values.lane !== undefined) return { target: { lane: values.lane }, says: `lane ${JSON.stringify(values.lane)}` };
  if (values["per-lane"] === true) return { target: { perLane: true }, says: "per-lane" };
  return undefined;
}

/** The options the flags ask for; refuses none given, and `--burst` without `--rate`. */
export function limitFlags(values: { concurrency?: string | undefined; rate?: string | undefined; burst?: string | undefined }): LimitOptions {
  if (values.concurrency === undefined && values.rate === undefined) {
    if (values.burst !== undefined) throw new UsageError("--burst goes with --rate MAX/PERIOD");
    throw new UsageError("emq limit needs --concurrency N|none or --rate MAX/PERIOD|none (emq limits <queue> shows them)");
  }
  if (values.rate === undefined && values.burst !== undefined) throw new UsageError("--burst goes with --rate MAX/PERIOD");
  return {
    ...(values.concurrency === undefined ? {} : { concurrency: concurrencyFlag(values.concurrency) }),
    ...(values.rate === undefined ? {} : { rate: rateFlag(values.rate, values.burst) }),
  };
}
