/**
 * OpenTelemetry tracing (`connect`'s `tracing: { api }`), for each backend × topology, with the
 * SDK's in-memory exporter: the `send <queue>` span (PRODUCER) of each admission — one span with
 * `messaging.batch.message_count` for `enqueueMany` — and its W3C trace context on the job's row
 * (the option `traceparent`); the `process <queue>` span (CONSUMER) around each handler, a root
 * span linked to the producer's context (`consumer: "link"`, the default) or its child (`consumer:
 * "child"`: one trace), the handler's own spans its children; names, kinds and
 * attributes exact; a throw, a settle refused and a lost lease on the process span; a producer and
 * a worker in different processes; nothing emitted, and no option on the row, without tracing
 * (or with an API that has no SDK behind it).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { keyspace } from "../../mod.ts";
import { EchoMQ, type Job, LeaseLostError, parseTraceparent, Tracing } from "../../client.ts";
import type { Connection } from "../../lib/client/connection.ts";
import { child, line } from "../reliability/_child.ts";
import { BACKENDS, comboName, eventually, TOPOLOGIES, useSites } from "./_harness.ts";

const exporter = new InMemorySpanExporter();
api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
api.trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));

type Span = ReturnType<InMemorySpanExporter["getFinishedSpans"]>[number];
const spans = (name: string): Span[] => exporter.getFinishedSpans().filter((s) => s.name === name);
const tp = (s: Span): string => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`;

const { sites, raws } = useSites();

describe("traceparent and the option", () => {
  test("a span context's traceparent, and back; an invalid one rides nowhere", () => {
    const sc = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1 };
    expect(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")).toEqual({ ...sc, isRemote: true });
    for (const bad of [undefined, "", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", `00-${"0".repeat(32)}-00f067aa0ba902b7-01`]) {
      expect(parseTraceparent(bad)).toBeUndefined();
    }
  });

  test("a malformed tracing option is refused before connecting", () => {
    expect(() => Tracing.from({ api: {} as never })).toThrow("tracing must be { api }");
    expect(Tracing.from(undefined)).toBeNull();
    expect(() => Tracing.from({ api, consumer: "parent" as never })).toThrow('connect: tracing.consumer must be "link" or "child", got "parent"');
    const noSetSpanContext = { ...api, trace: { getTracer: api.trace.getTracer.bind(api.trace), setSpan: api.trace.setSpan.bind(api.trace) } };
    expect(() => Tracing.from({ api: noSetSpanContext, consumer: "child" })).toThrow('tracing.consumer "child" needs api.trace.setSpanContext');
  });
});

for (const topology of TOPOLOGIES) {
  for (const backend of BACKENDS) {
    describe(comboName(backend, topology), () => {
      let mq: EchoMQ<{ n: number }>;
      let plain: EchoMQ<{ n: number }>;
      let raw: Connection;
      const connect = (tracing: boolean, consumer?: "child" | "link") => {
        const site = sites.get(topology)!;
        return EchoMQ.connect<{ n: number }>({
          addresses: site.addresses,
          cluster: site.cluster,
          backend,
          ...(tracing ? { tracing: { api, ...(consumer ? { consumer } : {}) } } : {}),
        });
      };
      beforeAll(async () => {
        raw = raws.get(topology)!;
        mq = await connect(true);
        plain = await connect(false);
      });
      afterAll(async () => {
        await mq.close();
        await plain.close();
      });
      beforeEach(() => exporter.reset());
      const rowOpts = async (q: string, id: string) => await raw.command(["HGET", `${keyspace(q).base}job:${id}`, "opts"], keyspace(q).meta);
      /** Runs a worker of `client` on `q` until `n` handler runs ended and their jobs left it. */
      const work = async (
        client: EchoMQ<{ n: number }>,
        q: string,
        n: number,
        handler: (job: Job<{ n: number }> & { signal: AbortSignal }) => unknown = () => {},
        opts = {},
      ) => {
        let runs = 0;
        const w = client.work(q, async (job) => {
          try {
            return await handler(job);
          } finally {
            runs++;
          }
        }, { backoff: 0, onError: () => {}, ...opts });
        await eventually(() => runs >= n && w.completed + w.failed + w.lost >= n, 20_000);
        await w.stop();
        return w;
      };

      test("enqueue: a send span under the caller's span; a process span linked to it, the handler's spans its children", async () => {
        const q = `tr-one-${backend}`;
        const tracer = api.trace.getTracer("test");
        const id = await tracer.startActiveSpan("request", async (request) => {
          try {
            return await mq.enqueue(q, { n: 1 });
          } finally {
            request.end();
          }
        });
        const [send] = spans(`send ${q}`);
        const [request] = spans("request");
        expect(send!.kind).toBe(api.SpanKind.PRODUCER);
        expect(send!.attributes).toEqual({
          "messaging.system": "echomq",
          "messaging.destination.name": q,
          "messaging.operation.type": "send",
          "messaging.operation.name": "enqueue",
          "messaging.message.id": id,
        });
        expect(send!.parentSpanContext?.spanId).toBe(request!.spanContext().spanId);
        expect(send!.spanContext().traceId).toBe(request!.spanContext().traceId);
        // the context rides on the row, and comes back with the claim
        expect(String(await rowOpts(q, id))).toBe(`traceparent=${tp(send!)}`);
        expect((await mq.getJob(q, id))!.traceparent).toBe(tp(send!));

        let inner = "";
        await work(mq, q, 1, (job) => {
          expect(job.traceparent).toBe(tp(send!));
          const s = tracer.startSpan("inside");
          inner = s.spanContext().spanId;
          s.end();
        });
        const [process] = spans(`process ${q}`);
        expect(process!.kind).toBe(api.SpanKind.CONSUMER);
        expect(process!.attributes).toEqual({
          "messaging.system": "echomq",
          "messaging.destination.name": q,
          "messaging.message.id": id,
          "messaging.operation.type": "process",
          "messaging.operation.name": "process",
          "echomq.attempt": 1,
          "echomq.settlement": "ack",
        });
        // a root span with a link to the producer's context
        expect(process!.parentSpanContext).toBeUndefined();
        expect(process!.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([
          [send!.spanContext().traceId, send!.spanContext().spanId],
        ]);
        expect(process!.status.code).toBe(api.SpanStatusCode.UNSET);
        const [inside] = spans("inside");
        expect(inside!.spanContext().spanId).toBe(inner);
        expect(inside!.parentSpanContext?.spanId).toBe(process!.spanContext().spanId);
        expect(process!.ended).toBe(true);
      });

      for (const consumer of ["child", "link"] as const) {
        test(`consumer "${consumer}": each attempt's process span ${consumer === "child" ? "a child of the send span, in its trace" : "a root of its own trace, linked to the send span"}; the handler's spans under it`, async () => {
          const q = `tr-${consumer}-${backend}`;
          const client = await connect(true, consumer);
          try {
            const tracer = api.trace.getTracer("test");
            const id = await mq.enqueue(q, { n: 1 });
            const send = spans(`send ${q}`)[0]!.spanContext();
            const inner: string[] = [];
            await work(client, q, 2, (job) => {
              const s = tracer.startSpan("inside");
              inner.push(s.spanContext().spanId);
              s.end();
              if (job.attempts === 1) throw new Error("again");
            }, { maxAttempts: 2 });
            const processed = spans(`process ${q}`);
            expect(processed.map((p) => [p.attributes["messaging.message.id"], p.attributes["echomq.attempt"]])).toEqual([[id, 1], [id, 2]]);
            const ids = (p: Span) => [p.parentSpanContext?.spanId, p.spanContext().traceId, p.links.map((l) => [l.context.traceId, l.context.spanId])];
            if (consumer === "child") {
              // one trace from send to every attempt: the attempts siblings under the send span
              for (const p of processed) expect(ids(p)).toEqual([send.spanId, send.traceId, []]);
            } else {
              // each attempt a trace of its own, linked to the producer's span
              for (const p of processed) {
                expect(p.parentSpanContext).toBeUndefined();
                expect(p.spanContext().traceId).not.toBe(send.traceId);
                expect(p.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([[send.traceId, send.spanId]]);
              }
              expect(processed[0]!.spanContext().traceId).not.toBe(processed[1]!.spanContext().traceId);
            }
            // the handler's own spans are children of their attempt's process span, in its trace
            const insides = spans("inside");
            expect(insides.map((s) => s.spanContext().spanId)).toEqual(inner);
            expect(insides.map((s) => [s.parentSpanContext?.spanId, s.spanContext().traceId])).toEqual(
              processed.map((p) => [p.spanContext().spanId, p.spanContext().traceId]),
            );
          } finally {
            await client.close();
          }
        });
      }

      test("schedule and submit name their operation; a deduplicated submit says so", async () => {
        const q = `tr-ops-${backend}`;
        const a = await mq.schedule(q, { n: 1 }, { delayMs: 0 });
        const b = await mq.submit(q, { n: 2 }, { dedup: { key: "k" } });
        const again = await mq.submit(q, { n: 3 }, { dedup: { key: "k" } });
        expect(again).toEqual({ id: b.id, outcome: "deduplicated" });
        const sent = spans(`send ${q}`);
        expect(sent.map((s) => [s.attributes["messaging.operation.name"], s.attributes["messaging.message.id"]])).toEqual([
          ["schedule", a],
          ["submit", b.id],
          ["submit", b.id],
        ]);
        expect(sent.map((s) => s.attributes["echomq.outcome"])).toEqual([undefined, undefined, "deduplicated"]);
        // the holder keeps its own options: dedup and its producer's context
        expect(String(await rowOpts(q, b.id))).toBe(`dedup=k\0traceparent=${tp(sent[1]!)}`);
      });

      test("enqueueMany: one send span for the batch, its context on every job", async () => {
        const q = `tr-many-${backend}`;
        const ids = await mq.enqueueMany(q, Array.from({ length: 25 }, (_, n) => ({ n })));
        const sent = spans(`send ${q}`);
        expect(sent.length).toBe(1);
        expect(sent[0]!.kind).toBe(api.SpanKind.PRODUCER);
        expect(sent[0]!.attributes).toEqual({
          "messaging.system": "echomq",
          "messaging.destination.name": q,
          "messaging.operation.type": "send",
          "messaging.operation.name": "enqueueMany",
          "messaging.batch.message_count": 25,
        });
        for (const id of [ids[0]!, ids[24]!]) expect(String(await rowOpts(q, id))).toBe(`traceparent=${tp(sent[0]!)}`);
        await work(mq, q, 25, () => {}, { concurrency: 8 });
        const processed = spans(`process ${q}`);
        expect(processed.map((s) => s.attributes["messaging.message.id"]).sort()).toEqual([...ids].sort());
        for (const p of processed) expect(p.links[0]!.context.spanId).toBe(sent[0]!.spanContext().spanId);
      });

      test("a handler's throw: exception recorded, status ERROR, each attempt its own span", async () => {
        const q = `tr-throw-${backend}`;
        const id = await mq.enqueue(q, { n: 1 });
        await work(mq, q, 2, () => {
          throw new Error("boom");
        }, { maxAttempts: 2 });
        const processed = spans(`process ${q}`);
        expect(processed.map((s) => [s.attributes["echomq.attempt"], s.attributes["echomq.settlement"]])).toEqual([
          [1, "retry"],
          [2, "bury"],
        ]);
        for (const p of processed) {
          expect(p.attributes["messaging.message.id"]).toBe(id);
          expect(p.status).toEqual({ code: api.SpanStatusCode.ERROR, message: "boom" });
          expect(p.events.map((e) => [e.name, e.attributes?.["exception.message"]])).toEqual([["exception", "boom"]]);
        }
      });

      test("a settle the server refuses: event echomq.settle_failed, status ERROR", async () => {
        const q = `tr-settle-${backend}`;
        const id = await mq.enqueue(q, { n: 1 });
        // the handler makes its own claim stale (the row's token moves on): the worker's ACK is refused
        await work(mq, q, 1, async (job) => {
          await raw.command(["HSET", `${keyspace(q).base}job:${id}`, "token", String(job.token + 1)], keyspace(q).meta);
        });
        const [p] = spans(`process ${q}`);
        expect(p!.events.map((e) => [e.name, e.attributes?.["echomq.settlement"], e.attributes?.["exception.type"]])).toEqual([
          ["echomq.settle_failed", "ack", LeaseLostError.name],
        ]);
        expect(p!.status.code).toBe(api.SpanStatusCode.ERROR);
        expect(p!.status.message).toMatch(/^ack failed: /);
      });

      test("a lease lost while the handler runs: event echomq.lease_lost, status ERROR", async () => {
        const q = `tr-lost-${backend}`;
        const id = await mq.enqueue(q, { n: 1 });
        await work(mq, q, 1, async (job) => {
          await raw.command(["HSET", `${keyspace(q).base}job:${id}`, "token", String(job.token + 1)], keyspace(q).meta);
          // the next heartbeat's EXTEND is refused: the signal aborts
          await new Promise<void>((done) => job.signal.addEventListener("abort", () => done(), { once: true }));
        }, { leaseMs: 3000, heartbeatMs: 100 });
        const [p] = spans(`process ${q}`);
        expect(p!.events.map((e) => [e.name, e.attributes?.["exception.type"]])).toEqual([["echomq.lease_lost", LeaseLostError.name]]);
        expect(p!.status.code).toBe(api.SpanStatusCode.ERROR);
        expect(p!.attributes["echomq.settlement"]).toBeUndefined();
      });

      test("without tracing: no span, no option on the row; a traced worker's span of such a job has no link", async () => {
        const q = `tr-none-${backend}`;
        const id = await plain.enqueue(q, { n: 1 });
        const [batch] = await plain.enqueueMany(q, [{ n: 2 }]);
        expect(await rowOpts(q, id)).toBeNull();
        expect(await rowOpts(q, batch!)).toBeNull();
        expect((await plain.getJob(q, id))!.traceparent).toBeUndefined();
        // a traced producer, an untraced worker: nothing emitted by the worker
        const traced = await mq.enqueue(q, { n: 3 });
        exporter.reset();
        await work(plain, q, 3);
        expect(exporter.getFinishedSpans()).toEqual([]);
        // an untraced producer, a traced worker: a process span without a link
        const lone = await plain.enqueue(q, { n: 4 });
        await work(mq, q, 1);
        expect(spans(`process ${q}`).map((s) => [s.attributes["messaging.message.id"], s.links.length])).toEqual([[lone, 0]]);
        expect(traced).not.toBe(lone);
      });

      test("an API with no SDK behind it: no option on the row", async () => {
        const site = sites.get(topology)!;
        const bare = await EchoMQ.connect<{ n: number }>({
          addresses: site.addresses,
          cluster: site.cluster,
          backend,
          tracing: { api, tracerProvider: new api.ProxyTracerProvider() }, // a proxy with no delegate: the no-op tracer
        });
        try {
          const q = `tr-bare-${backend}`;
          const id = await bare.enqueue(q, { n: 1 });
          expect(await rowOpts(q, id)).toBeNull();
          expect(exporter.getFinishedSpans()).toEqual([]);
        } finally {
          await bare.close();
        }
      });

      test("a producer here, a worker in another process: its process spans link to these send spans", async () => {
        const q = `tr-procs-${backend}`;
        const site = sites.get(topology)!;
        const worker = child([JSON.stringify(site.addresses), site.cluster ? "1" : "0", q, backend, "3"], "_traced_worker.ts");
        try {
          await line(worker.lines, "ready");
          const ids = [await mq.enqueue(q, { n: 1 }), ...(await mq.enqueueMany(q, [{ n: 2 }, { n: 3 }]))];
          const [one] = spans(`send ${q}`).filter((s) => s.attributes["messaging.operation.name"] === "enqueue");
          const [many] = spans(`send ${q}`).filter((s) => s.attributes["messaging.operation.name"] === "enqueueMany");
          const got = JSON.parse((await line(worker.lines, "spans ")).slice("spans ".length)) as Array<{
            name: string;
            kind: number;
            traceId: string;
            attributes: Record<string, unknown>;
            links: Array<{ traceId: string; spanId: string; isRemote: boolean }>;
          }>;
          const byId = new Map(got.map((s) => [s.attributes["messaging.message.id"], s]));
          expect([...byId.keys()].sort()).toEqual([...ids].sort());
          const expectLink = (id: string, send: Span) => {
            const s = byId.get(id)!;
            expect(s.name).toBe(`process ${q}`);
            expect(s.kind).toBe(api.SpanKind.CONSUMER);
            expect(s.attributes["echomq.attempt"]).toBe(1);
            // its own trace, linked across the processes to the producer's span
            expect(s.traceId).not.toBe(send.spanContext().traceId);
            expect(s.links).toEqual([{ traceId: send.spanContext().traceId, spanId: send.spanContext().spanId, isRemote: true }]);
          };
          expectLink(ids[0]!, one!);
          expectLink(ids[1]!, many!);
          expectLink(ids[2]!, many!);
          await worker.exited;
        } finally {
          worker.proc.kill();
        }
      }, 60_000);
    });
  }
}
