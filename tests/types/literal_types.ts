// Compile-pass type assertions, checked by the test command's `tsc --noEmit`: a wrong inferred
// type makes an `Expect<…>` fail to compile.
import {
  type JobId,
  jobKey,
  type JobKey,
  keyspace,
  newJobId,
  type ParseQueueKey,
  queueKey,
  type QueueKey,
} from "../../mod.ts";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
type Expect<T extends true> = T;

const pending = queueKey("orders", "pending");
const row = jobKey("orders", "JOB0Nb1VTbfnu4");
const widened: string = String(Date.now());
const dynamic = queueKey(widened, "dead");
const orders = keyspace("orders");
const fresh = orders.job(newJobId());

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
];
