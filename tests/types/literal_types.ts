// Compile-pass type assertions, checked by the test command's `tsc --noEmit`: a wrong inferred
// type makes an `Expect<…>` fail to compile.
import {
  type BrandedId,
  type CheckBrandedId,
  type CheckClientQueue,
  type CheckJobId,
  type CheckKeyLane,
  type CheckLane,
  type CheckName,
  type CheckQueue,
  type JobId,
  type JobKey,
  jobKey,
  keyspace,
  type LaneNameError,
  type NameError,
  newJobId,
  type ParseQueueKey,
  type QueueEmptyError,
  type QueueKey,
  queueKey,
  type QueueNulError,
} from "../../mod.ts";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
type Expect<T extends true> = T;

const pending = queueKey("orders", "pending");
const row = jobKey("orders", "JOB0Nb1VTbfnu4");
const widened: string = String(Date.now());
const dynamic = queueKey(widened, "dead");
const orders = keyspace("orders");
const fresh = orders.job(newJobId());
const user = jobKey("orders", "USR0Nb1VTbfnu4");
const userRow = orders.job("ABCzzzzzzzzzzz");
const branded = orders.job("USR0Nb1VTbfnu4" as unknown as BrandedId<"USR">);
// The named builders: literal in, literal out; the default lane's keys take "".
const laneState = orders.lane("a");
const defaultLaneState = orders.lane("");
const levels = orders.levels("tenant:1");
const ready = orders.ready("a", 5);
const readyDefault = orders.ready("", 5);
const readyPending = orders.ready("", 0);
const readyZero = orders.ready("a", 0);
const readyWide = orders.ready(widened, 0);
const readyWidePriority = orders.ready("a", Number(widened));
const scheduler = orders.scheduler("nightly");
const schedulerWide = orders.scheduler(widened);
const wideLane = keyspace(widened).lane(widened);

export type Checks = [
  Expect<Equal<typeof pending, "emq:{orders}:pending">>,
  Expect<Equal<typeof row, "emq:{orders}:job:JOB0Nb1VTbfnu4">>,
  Expect<Equal<typeof dynamic, `emq:{${string}}:dead`>>,
  Expect<Equal<typeof orders.base, "emq:{orders}:">>,
  Expect<Equal<typeof orders.schedule, QueueKey<"orders", "schedule">>>,
  Expect<Equal<typeof fresh, JobKey<"orders", JobId>>>,
  Expect<Equal<ParseQueueKey<"emq:{orders}:pending">, { queue: "orders"; type: "pending" }>>,
  Expect<Equal<ParseQueueKey<"emq:{orders}:job:JOB0Nb1VTbfnu4">, { queue: "orders"; type: "job:JOB0Nb1VTbfnu4" }>>,
  Expect<Equal<ParseQueueKey<"emq:{a:b}:meta">, { queue: "a:b"; type: "meta" }>>,
  Expect<Equal<ParseQueueKey<"emq:{}:pending">, { queue: ""; type: "pending" }>>,
  Expect<
    Equal<
      ParseQueueKey<"emq:{a}b}:pending">,
      { readonly error: "the queue name must end at the first '}', followed by ':'" }
    >
  >,
  Expect<
    Equal<
      ParseQueueKey<"EMQ:{orders}:pending">,
      { readonly error: "a queue key starts with 'emq:{' and has '}:' after the name" }
    >
  >,
  Expect<Equal<ParseQueueKey<"emq:{a{b}:pending">, { readonly error: "queue name must not contain '{'" }>>,
  // Mutation: drop ParseQueueKey's NUL line (a NUL name then parses as { queue: "a\0b" }).
  Expect<Equal<ParseQueueKey<"emq:{a\0b}:pending">, { readonly error: "queue name must not contain NUL" }>>,
  // Row keys take any branded id, with a literal result type (JOB is gated only in transitions).
  Expect<Equal<typeof user, "emq:{orders}:job:USR0Nb1VTbfnu4">>,
  Expect<Equal<typeof userRow, "emq:{orders}:job:ABCzzzzzzzzzzz">>,
  Expect<Equal<typeof branded, JobKey<"orders", BrandedId<"USR">>>>,
  Expect<Equal<CheckBrandedId<"USR0Nb1VTbfnu4">, "USR0Nb1VTbfnu4">>,
  Expect<Equal<CheckBrandedId<"JOB0Nb1VTbfnu4">, "JOB0Nb1VTbfnu4">>,
  Expect<Equal<CheckBrandedId<JobId>, JobId>>,
  Expect<Equal<CheckBrandedId<BrandedId>, BrandedId>>,
  Expect<Equal<CheckBrandedId<string>, string>>,
  Expect<Equal<CheckBrandedId<"JOB0Nb1VTbfnu45">, "branded id must be 14 characters: a namespace of 3 capital letters [A-Z] and 11 Base62 characters">>,
  Expect<Equal<CheckBrandedId<"Job0Nb1VTbfnu4">, "branded id namespace must be 3 capital letters [A-Z]">>,
  Expect<Equal<CheckBrandedId<"USR0Nb1VTbfn-4">, "branded id payload must be 11 Base62 characters [0-9A-Za-z]">>,
  // The client's transitions still want JOB.
  Expect<Equal<CheckJobId<"USR0Nb1VTbfnu4">, "job id must start with the namespace JOB">>,
  Expect<Equal<CheckJobId<JobId>, JobId>>,
  // The keyspace accepts the empty name (standalone scripts only); the client refuses it.
  Expect<Equal<CheckQueue<"">, "">>,
  Expect<Equal<CheckClientQueue<"">, QueueEmptyError>>,
  Expect<Equal<CheckClientQueue<"orders">, "orders">>,
  Expect<Equal<CheckClientQueue<string>, string>>,
  Expect<Equal<CheckClientQueue<"a\0b">, QueueNulError>>,
  Expect<Equal<CheckClientQueue<"" | "orders">, QueueEmptyError | "orders">>, // a union refuses its empty member
  Expect<Equal<QueueEmptyError, "queue name must not be empty: the server refuses an empty hashtag">>,
  // The named builders keep literal key types.
  Expect<Equal<typeof laneState, "emq:{orders}:lane:a">>,
  Expect<Equal<typeof defaultLaneState, "emq:{orders}:lane:">>,
  Expect<Equal<typeof levels, "emq:{orders}:levels:tenant:1">>,
  Expect<Equal<typeof ready, "emq:{orders}:ready:5:a">>,
  Expect<Equal<typeof readyDefault, "emq:{orders}:ready:5:">>,
  Expect<Equal<typeof readyPending, "emq:{orders}:pending">>, // the default lane at 0 is pending
  Expect<Equal<typeof readyZero, "emq:{orders}:ready:0:a">>,
  Expect<Equal<typeof readyWide, "emq:{orders}:pending" | `emq:{orders}:ready:0:${string}`>>, // "" or not
  Expect<Equal<typeof readyWidePriority, `emq:{orders}:ready:${number}:a`>>,
  Expect<Equal<typeof scheduler, "emq:{orders}:scheduler:nightly">>,
  Expect<Equal<typeof schedulerWide, `emq:{orders}:scheduler:${string}`>>,
  Expect<Equal<typeof wideLane, `emq:{${string}}:lane:${string}`>>,
  // The parser takes every key type of docs/GRAMMAR.md apart: queue, then the type after `}:`.
  Expect<Equal<ParseQueueKey<typeof laneState>, { queue: "orders"; type: "lane:a" }>>,
  Expect<Equal<ParseQueueKey<typeof defaultLaneState>, { queue: "orders"; type: "lane:" }>>,
  Expect<Equal<ParseQueueKey<typeof levels>, { queue: "orders"; type: "levels:tenant:1" }>>,
  Expect<Equal<ParseQueueKey<typeof ready>, { queue: "orders"; type: "ready:5:a" }>>,
  Expect<Equal<ParseQueueKey<typeof readyDefault>, { queue: "orders"; type: "ready:5:" }>>,
  Expect<Equal<ParseQueueKey<typeof scheduler>, { queue: "orders"; type: "scheduler:nightly" }>>,
  Expect<Equal<ParseQueueKey<typeof user>, { queue: "orders"; type: "job:USR0Nb1VTbfnu4" }>>,
  Expect<Equal<ParseQueueKey<QueueKey<"orders", "dedup_ttl">>, { queue: "orders"; type: "dedup_ttl" }>>,
  Expect<Equal<ParseQueueKey<QueueKey<"orders", "events">>, { queue: "orders"; type: "events" }>>,
  // One check for every kind of name: the lane's is CheckName's, the keys' also take "".
  Expect<Equal<CheckLane<"a">, "a">>,
  Expect<Equal<CheckLane<string>, string>>,
  Expect<Equal<CheckName<"n{x", "scheduler name">, "scheduler name must not contain '{': names follow the queue-name rule">>,
  Expect<Equal<CheckName<"", "dedup key">, "dedup key must not be empty: omit dedup to admit without deduplication">>,
  Expect<Equal<CheckName<"a" | "b}", "dedup key">, "a" | "dedup key must not contain '}': names follow the queue-name rule">>,
  Expect<Equal<CheckKeyLane<"">, "">>,
  Expect<Equal<CheckKeyLane<"a\0">, "lane name must not contain NUL: it would corrupt NUL-joined entries">>,
  Expect<Equal<LaneNameError, NameError<"lane name">>>,
  Expect<
    Equal<
      LaneNameError,
      | "lane name must not be empty: the default lane has no name (omit the lane)"
      | "lane name must not contain '}': names follow the queue-name rule"
      | "lane name must not contain '{': names follow the queue-name rule"
      | "lane name must not contain NUL: it would corrupt NUL-joined entries"
    >
  >,
];
