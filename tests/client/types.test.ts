/**
 * The client's queue parameters are checked at compile time like `queueKey` (literal names with a
 * brace or NUL fail with the rule as the message; widened strings are checked at run time).
 * Exact messages: `@ts-expect-error` would accept any error.
 */
import { expect, test } from "bun:test";
import { resolve } from "node:path";
import { diagnose, ROOT } from "../types/compiler.ts";

const file = resolve(ROOT, "tests/client/__compile_fail_client.ts");
const source = `
import { EchoMQ } from "../../client.ts";
declare const mq: EchoMQ<{ n: number }>;
declare const dynamic: string;
void mq.enqueue("orders", { n: 1 });
void mq.enqueue(dynamic, { n: 1 });
void mq.enqueue("a}b", { n: 1 });
void mq.claim("a{b", { leaseMs: 10 });
void mq.counts("a\\0b");
void mq.enqueue("orders", { n: "x" });
mq.work("ok", (job) => { const n: number = job.payload.n; void n; });
void mq.enqueue("orders", { n: 1 }, { lane: "tenant-1" });
void mq.enqueue("orders", { n: 1 }, { lane: dynamic });
void mq.enqueue("orders", { n: 1 }, { lane: "a{b" });
void mq.enqueueMany("orders", [{ n: 1 }], { lane: (p, i) => (p.n > i ? "x" : undefined) });
void mq.pause("orders", { lane: "" });
`;

test("literal queue and lane names are checked by the compiler, payloads by the codec's type", () => {
  const got = diagnose([file], new Map([[file, source]])).map(([f, line, message]) => {
    expect(f).toBe(file);
    return [line, message.split("\n")[0]];
  });
  expect(got).toEqual([
    [7, `Argument of type '"a}b"' is not assignable to parameter of type '"queue name must not contain '}': a brace would move the cluster hashtag"'.`],
    [8, `Argument of type '"a{b"' is not assignable to parameter of type '"queue name must not contain '{': a brace would move the cluster hashtag"'.`],
    [9, `Argument of type '"a\\0b"' is not assignable to parameter of type '"queue name must not contain NUL: it would corrupt NUL-joined entries"'.`],
    [10, "Type 'string' is not assignable to type 'number'."],
    [14, `Type '"a{b"' is not assignable to type '"lane name must not contain '{': names follow the queue-name rule"'.`],
    [16, `Type '""' is not assignable to type '"lane name must not be empty: the default lane has no name (omit the lane)"'.`],
  ]);
});
