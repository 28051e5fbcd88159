/**
 * A queue's lanes as the server holds them: each lane's backlog (ready jobs), its held jobs, its
 * pause, its limits and its park, a page at a time, busiest first — what `mq.lanes` returns and
 * the dashboard's Lanes section shows. Lanes are the queue's fair share: claims serve its lanes
 * round-robin (docs/design/lanes.md §10). Reads only: `pause`, `limit` and `penalize` with
 * `{ lane }` change a lane.
 *
 * @module
 */
import type { Keyspace } from "../keyspace/mod.ts";
import { LANE } from "../wire/mod.ts";
import type { ClientContext } from "./context.ts";
import { fields, scored, text } from "./info.ts";
import { LANE_LIMIT_FIELDS, limitsOf, PER_LANE_FIELDS, type QueueLimits, type RateLimit } from "./limits.ts";
import { integerIn, refuse, wholeNumber } from "./options.ts";

/** Most lanes one page of `lanes` holds. */
const MAX_PAGE = 1000;

/** One lane of a queue (`mq.lanes`). */
export interface LaneInfo {
  /** Its name; `null` for the default lane (the jobs enqueued without a lane). */
  readonly name: string | null;
  /** Its ready jobs (its backlog). */
  readonly ready: number;
  /** Its jobs claimed and not yet settled. */
  readonly active: number;
  /** Whether it is paused (`mq.pause(queue, { lane })`). */
  readonly paused: boolean;
  /**
   * The concurrency limit in force: its own, else every lane's default (`perLane`); null when
   * neither is set. {@link own} tells which.
   */
  readonly concurrency: number | null;
  /** The rate limit in force: its own, else every lane's default; null when neither is set. */
  readonly rate: Required<RateLimit> | null;
  /** Its own limits (`mq.limit(queue, …, { lane })`), each null when it inherits the default. */
  readonly own: { readonly concurrency: number | null; readonly rate: Required<RateLimit> | null };
  /** Until when claims hand out none of its jobs (a penalty, or its rate out of tokens), or null. */
  readonly parkedUntil: number | null;
  /** Whether it waits in the ring that claims serve (an eligible lane does; a limited one may not yet). */
  readonly inRing: boolean;
}

/** A page of a queue's lanes, busiest first, and how many lanes it has. */
export interface LanePage {
  /** The page's lanes, by ready jobs descending. */
  readonly lanes: LaneInfo[];
  /** Every lane with a state on the server (the default lane included once it has one). */
  readonly total: number;
}

/** A whole non-negative count from a field's text (absent, or not a count: 0). */
function count(t: string | undefined): number {
  const n = Number(t);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/**
 * See `EchoMQ.lanes`: one atomic read of the page's names and scores, the lane count and `meta`
 * (the defaults), then the page's state hashes. A lane idle in between shows with no state.
 */
export async function lanes<P>(c: ClientContext<P>, ks: Keyspace, page: { offset?: number; limit?: number }): Promise<LanePage> {
  const offset = wholeNumber("lanes: offset", "options", page?.offset ?? 0, 0);
  const limit = integerIn("lanes: limit", page?.limit ?? 100, 1, MAX_PAGE, refuse("options"));
  const head = await c.conn.batch(
    [["ZREVRANGE", ks.lanes, String(offset), String(offset + limit - 1), "WITHSCORES"], ["ZCARD", ks.lanes], ["HGETALL", ks.meta]],
    ks.meta,
    true,
  );
  for (const r of head) if (r instanceof Error) throw r;
  const [members, total, meta] = head;
  const names = scored(members!);
  const now = Date.now();
  const defaults = limitsOf(fields(meta!), now, PER_LANE_FIELDS);
  const hashes = names.length === 0 ? [] : await c.conn.batch(names.map(([name]) => ["HGETALL", ks.lane(name)]), ks.meta);
  return {
    lanes: names.map(([name, ready], i) => {
      const h = hashes[i] instanceof Error ? new Map<string, Uint8Array>() : fields(hashes[i]!);
      return laneInfo(name, ready, h, defaults, now);
    }),
    total: Number(total),
  };
}

/** A lane's {@link LaneInfo} from its `lanes` score, its state hash and every lane's defaults. */
function laneInfo(name: string, ready: number, h: ReadonlyMap<string, Uint8Array>, defaults: QueueLimits, now: number): LaneInfo {
  const own = limitsOf(h, now, LANE_LIMIT_FIELDS);
  return {
    name: name === "" ? null : name,
    ready: count(String(ready)),
    active: count(text(h, LANE.active)),
    paused: text(h, LANE.paused) === "1",
    concurrency: own.concurrency ?? defaults.concurrency,
    rate: own.rate ?? defaults.rate,
    own: { concurrency: own.concurrency, rate: own.rate },
    parkedUntil: own.parkedUntil,
    inRing: text(h, LANE.ring) === "1",
  };
}
