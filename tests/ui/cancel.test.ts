/**
 * Cancel on the dashboard (issue 37.7): `POST /api/cancel` answers what `mq.cancel` did (a waiting
 * job buried, a running one buried and its handler told, a finished one said so, not refused); the
 * job page has a Cancel button where a job can be cancelled (pending, scheduled, active), and the
 * active table a Cancel column. On both backends.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EchoMQ } from "../../client.ts";
import { dashboard } from "../../ui.ts";
import { STATE_TABLES } from "../../lib/ui/queue_html.ts";
import { moduleBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";

const BACKENDS = [...(moduleBuilt() ? (["module"] as const) : []), "scripts"] as const;
const AT = "http://127.0.0.1:9/";
const HEADERS = { host: "127.0.0.1:9", origin: "http://127.0.0.1:9", "content-type": "application/json" };

describe.each(BACKENDS)("cancel on the dashboard (%s)", (backend) => {
  let server: ServerHandle;
  let mq: EchoMQ<unknown>;

  beforeAll(async () => {
    server = await startServer({ module: backend === "module" ? undefined : false });
    mq = await EchoMQ.connect({ url: `valkey://127.0.0.1:${server.port}`, backend });
  }, 60_000);
  afterAll(async () => {
    await mq?.close();
    await server?.stop();
  });

  test("POST /api/cancel: waiting, running, finished; the Cancel buttons where they apply", async () => {
    const ui = dashboard(mq);
    try {
      const cancel = async (id: string): Promise<unknown> =>
        await (await ui(new Request(`${AT}api/cancel`, { method: "POST", headers: HEADERS, body: JSON.stringify({ name: "orders", id }) }))).json();
      const page = async (id: string): Promise<string> =>
        await (await ui(new Request(`${AT}job?q=orders&id=${id}`, { headers: { host: "127.0.0.1:9" } }))).text();
      const waiting = await mq.enqueue("orders", { n: 1 });
      expect(await page(waiting)).toContain('id="job-cancel"');
      expect(await cancel(waiting)).toEqual({ outcome: "cancelled" });
      expect(await page(waiting)).not.toContain('id="job-cancel"');
      await mq.enqueue("orders", { n: 2 });
      const running = (await mq.claim("orders", { leaseMs: 60_000 }))!;
      expect(await page(running.id)).toContain('id="job-cancel"');
      expect(await cancel(running.id)).toEqual({ outcome: "aborting" });
      expect(await cancel(running.id)).toEqual({ outcome: "finished" });
      expect((await mq.getJob("orders", running.id))!.reason).toBe("cancelled");
      expect(STATE_TABLES.active.columns.at(-1)).toBe("Action");
    } finally {
      ui.close();
    }
  });
});
