/**
 * A traced worker in a process of its own (for tests/client/tracing.test.ts): its own
 * OpenTelemetry SDK with an in-memory exporter; works `queue` until `n` jobs are done, then prints
 * one line `spans <json>` (each process span's name, kind, attributes, links and trace id) and exits.
 *
 *   bun tests/reliability/_traced_worker.ts <addresses-json> <cluster 0|1> <queue> <backend> <n>
 */
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { EchoMQ } from "../../client.ts";

const [addresses, cluster, queue, backend, n] = process.argv.slice(2) as [string, string, string, string, string];
const exporter = new InMemorySpanExporter();
api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
api.trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));

const mq = await EchoMQ.connect({
  addresses: JSON.parse(addresses),
  cluster: cluster === "1",
  backend: backend as "module" | "scripts",
  tracing: { api },
});
let done = 0;
let finish!: () => void;
const all = new Promise<void>((resolve) => (finish = resolve));
const worker = mq.work(queue, () => {
  if (++done >= Number(n)) finish();
}, { concurrency: 4 });
console.log("ready");
await all;
await worker.stop(); // every settle applied, every span ended
const spans = exporter.getFinishedSpans().filter((s) => s.name.startsWith("process ")).map((s) => ({
  name: s.name,
  kind: s.kind,
  traceId: s.spanContext().traceId,
  attributes: s.attributes,
  links: s.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, isRemote: l.context.isRemote })),
}));
console.log(`spans ${JSON.stringify(spans)}`);
await mq.close();
process.exit(0);
