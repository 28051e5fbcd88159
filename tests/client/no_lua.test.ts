/**
 * A server without Lua (Valkey 9.1 made Lua a module an operator can leave out; here the 9.1.2
 * the bootstrap installs, its Lua unloaded with `MODULE UNLOAD lua`): `backend: "scripts"`, and
 * `"auto"` without the emq module, fail at connect with one BackendError naming the cause; `"auto"`
 * with the module connects and works. Runs where that server is installed (tools/bootstrap.sh).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { EchoMQ } from "../../client.ts";
import { command, moduleIfBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";

const V9 = resolve(import.meta.dir, "../../.tmp/valkey-9/valkey-server");
const MODULE = moduleIfBuilt();

describe.skipIf(!existsSync(V9))("a Valkey 9.1 server without Lua", () => {
  const servers: ServerHandle[] = [];
  let bare: ServerHandle; // no Lua, no module
  let withModule: ServerHandle | undefined; // no Lua, the emq module
  const noLua = async (s: ServerHandle): Promise<void> => {
    expect(await command(s.port, ["MODULE", "UNLOAD", "lua"])).toBe("OK");
  };
  beforeAll(async () => {
    const args = ["--enable-module-command", "local"];
    bare = await startServer({ binary: V9, module: false, args });
    servers.push(bare);
    await noLua(bare);
    if (MODULE) {
      withModule = await startServer({ binary: V9, module: MODULE, args });
      servers.push(withModule);
      await noLua(withModule);
    }
  }, 60_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  const connect = (s: ServerHandle, backend: "scripts" | "auto") => EchoMQ.connect({ addresses: [{ host: s.host, port: s.port }], backend });

  test('backend "scripts" and "auto" without the module: one BackendError at connect, naming the cause', async () => {
    for (const backend of ["scripts", "auto"] as const) {
      const e = await connect(bare, backend).then((mq) => mq.close().then(() => "connected"), (x: unknown) => x);
      expect({ backend, name: (e as Error).name, rule: (e as { rule?: string }).rule }).toEqual({ backend, name: "BackendError", rule: "backend" });
      expect((e as Error).message).toBe(
        `backend "${backend}": the server runs no Lua (SCRIPT LOAD answers "ERR Could not find scripting engine 'lua'": ` +
          "Valkey 9.1 makes Lua a module an operator may leave out) and " +
          (backend === "auto" ? "has no emq module" : "the scripts need it") +
          '; load the emq module (native/) and use backend "module" or "auto"',
      );
    }
  });

  test.skipIf(MODULE === undefined)('backend "auto" with the emq module: the module, and the verbs work', async () => {
    const mq = await connect(withModule!, "auto");
    try {
      expect(mq.backend).toBe("module");
      const id = await mq.enqueue("no-lua", { n: 1 });
      const job = await mq.claim("no-lua", { leaseMs: 10_000 });
      expect(job?.id).toBe(id);
      await mq.ack(job!);
      expect((await mq.counts("no-lua")).active).toBe(0);
    } finally {
      await mq.close();
    }
  });
});
