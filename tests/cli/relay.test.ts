// `emq relay`: drains the outboxes of queues nobody works — a flow's children in other queues made
// (--once: one round, the count printed), and a parent woken once its children finished; without
// a queue or --url, one usage line. `emq flow`: a flow's tree.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EchoMQ } from "../../client.ts";
import { type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { emq, emqAsync } from "./_emq.ts";

describe("emq relay", () => {
  let server: ServerHandle;
  let mq: EchoMQ<{ n: number }>;
  let url: string;
  beforeAll(async () => {
    server = await startServer({ module: false });
    mq = await EchoMQ.connect({ addresses: [{ host: server.host, port: server.port }] });
    url = `valkey://127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    await mq.close();
    await server.stop();
  });

  test("--once: the children elsewhere made, then the parent woken", async () => {
    const tree = await mq.flow({ queue: "cli-p", payload: { n: 0 }, children: [{ queue: "cli-a", payload: { n: 1 } }, { queue: "cli-b", payload: { n: 2 } }] });
    const made = await emqAsync("relay", "cli-p", "--url", url, "--once");
    expect(made).toMatchObject({ code: 0, out: "2\n" });
    for (const q of ["cli-a", "cli-b"]) {
      const job = (await mq.claim(q, { leaseMs: 60_000 }))!;
      await mq.ack(job);
    }
    expect(await mq.claim("cli-p", { leaseMs: 60_000 })).toBeNull();
    expect(await emqAsync("relay", "cli-a", "cli-b", "--url", url, "--once")).toMatchObject({ code: 0, out: "2\n" });
    expect((await mq.claim("cli-p", { leaseMs: 60_000 }))?.id).toBe(tree.id);
  }, 60_000);

  test("emq flow prints the tree from its root, whichever job is named; emq job shows a parent and its children", async () => {
    const tree = await mq.flow({ queue: "cli-f", payload: { n: 0 }, children: [{ queue: "cli-f", payload: { n: 1 } }, { queue: "cli-g", payload: { n: 2 } }] });
    const [here, there] = tree.children as [typeof tree, typeof tree];
    const done = (await mq.claim("cli-f", { leaseMs: 60_000 }))!;
    await mq.ack(done, "ok");
    const lines = [
      `"cli-f" ${tree.id}  waiting-children`,
      `  "cli-f" ${here.id}  completed  result "ok"`,
      `  "cli-g" ${there.id}  missing`,
    ].join("\n");
    for (const [q, id] of [["cli-f", tree.id], ["cli-f", here.id]]) {
      expect(await emqAsync("flow", q!, id!, "--url", url)).toMatchObject({ code: 0, out: `${lines}\n` });
    }
    expect((await emqAsync("jobs", "cli-f", "waiting-children", "--url", url)).out).toStartWith(`"cli-f": 1 waiting-children job(s), 1–1 shown\n`);
    const job = await emqAsync("job", "cli-f", tree.id, "--url", url);
    expect(job.out).toContain("  children    2: 1 completed, 1 unfinished\n");
    expect((await emqAsync("job", "cli-f", here.id, "--url", url)).out).toContain(`  parent      "cli-f" ${tree.id}\n`);
    expect(await emqAsync("flow", "cli-f", "JOB00000000009", "--url", url)).toMatchObject({ code: 1 });
  }, 60_000);

  test("without a queue or --url: one usage line, exit 2", () => {
    for (const args of [["relay", "--url", "valkey://127.0.0.1:1"], ["relay", "q"]]) {
      const r = emq(...args);
      expect(r.code).toBe(2);
      expect(r.err).toContain("emq relay takes one or more queue names and --url");
    }
  });
});
