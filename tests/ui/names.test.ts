/**
 * Names that are bytes, not text (issue 18 #10): one `meta` whose queue name is not UTF-8 must not
 * take down `queues()`, the dashboard or `/metrics` — the other queues show, and the unreadable one
 * is shown and exported escaped (`emq:{\xff}:meta`). On both backends.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import { GlideClient } from "@valkey/valkey-glide";
import { EchoMQ } from "../../client.ts";
import { dashboard } from "../../ui.ts";
import { moduleBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";

const BACKENDS = [...(moduleBuilt() ? (["module"] as const) : []), "scripts"] as const;

describe.each(BACKENDS)("a queue name that is not UTF-8 (%s)", (backend) => {
  let server: ServerHandle;
  let mq: EchoMQ<{ n: number }>; // a typed client: dashboard() takes any client's type
  beforeAll(async () => {
    server = await startServer({ module: backend === "module" ? undefined : false });
    mq = await EchoMQ.connect<{ n: number }>({ url: `valkey://127.0.0.1:${server.port}`, backend });
    await mq.enqueue("fine", { n: 1 });
    const raw = await GlideClient.createClient({ addresses: [{ host: server.host, port: server.port }] });
    const key = Buffer.concat([Buffer.from("emq:{"), Buffer.from([0xff, 0x0a]), Buffer.from("}:meta")]);
    expect(await raw.customCommand([Buffer.from("HSET"), key, Buffer.from("created_ms"), Buffer.from("1")])).toBe(1);
    raw.close();
  }, 60_000);
  afterAll(async () => {
    await mq?.close();
    await server?.stop();
  });

  test("queues() lists the others; scanQueues reports it escaped", async () => {
    expect(await mq.queues()).toEqual(["fine"]);
    const unreadable: string[] = [];
    for await (const page of mq.scanQueues()) unreadable.push(...page.unreadable);
    expect(unreadable).toEqual(["emq:{\\xff\\x0a}:meta"]);
  });

  test("the dashboard's page, its API and /metrics answer, the name escaped", async () => {
    const ui = dashboard(mq);
    const get = (path: string) => ui(new Request(`http://127.0.0.1:9${path}`, { headers: { host: "127.0.0.1:9" } }));
    try {
      const page = await get("/");
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('href="queues/fine"');
      expect(html).toContain("1 queue(s) whose name is not UTF-8 text (no call can name them), escaped: <code>emq:{\\xff\\x0a}:meta</code>");
      const api = await get("/api/queues");
      expect(api.status).toBe(200);
      const reply = (await api.json()) as { queues: Array<{ name: string }>; unreadable: string[] };
      expect([reply.queues.map((q) => q.name), reply.unreadable]).toEqual([["fine"], ["emq:{\\xff\\x0a}:meta"]]);
      const metrics = await get("/metrics");
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      expect(text).toContain('echomq_jobs{queue="fine",state="pending"} 1\n');
      expect(text).toContain('echomq_unreadable_queue{key="emq:{\\\\xff\\\\x0a}:meta"} 1\n');
    } finally {
      ui.close();
    }
  });
});
