/**
 * A module of another release is refused at connect, both wires named: the client reads the wire
 * each primary's module registered its commands under (`COMMAND DOCS emq.enqueue`: "EchoMQ wire-N
 * EMQ.ENQUEUE"). On real servers (one and a 3-primary cluster) the module of this build reads as
 * this wire; a module of another wire (a stand-in connection answering as one would, and a real
 * build of another wire when `EMQ_OTHER_WIRE_MODULE` names one) is refused for backend `module`
 * and `auto`; a user the ACL denies `COMMAND DOCS` is not refused for it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { EchoMQ } from "../../client.ts";
import { moduleWires, selectBackend } from "../../lib/client/backend.ts";
import { Connection } from "../../lib/client/connection.ts";
import { WIRE } from "../../lib/wire/mod.ts";
import { type ClusterHandle, moduleIfBuilt, type ServerHandle, startCluster, startServer } from "../../tools/embedded/mod.ts";

const MODULE = moduleIfBuilt();
const OTHER = process.env["EMQ_OTHER_WIRE_MODULE"];

/** A connection that answers `COMMAND INFO` as a server with the module does, and `COMMAND DOCS` with `docs`. */
function standIn(docs: unknown[] | Error): Connection {
  const conn = {
    everyPrimary: (args: string[]) => {
      if (args[1] === "INFO") return Promise.resolve([[["emq.enqueue", -3]]]);
      if (args[1] === "DOCS") return docs instanceof Error ? Promise.reject(docs) : Promise.resolve(docs);
      return Promise.reject(new Error(`unexpected ${args.join(" ")}`));
    },
  };
  return conn as unknown as Connection;
}

const summary = (wire: number): unknown => [{ key: "emq.enqueue", value: [{ key: "summary", value: `EchoMQ wire-${wire} EMQ.ENQUEUE` }] }];

/** What connect says of a module of `other`. */
const refusal = (backend: string, other: string): string =>
  `backend "${backend}": the server's emq module speaks wire ${other}, this client wire ${WIRE}; ` +
  "load the module of this client's release (npx emq module path prints its file)";

test("a module of another wire: BackendError naming both, for backend module and auto", async () => {
  for (const backend of ["module", "auto"] as const) {
    const e = await selectBackend(standIn([summary(WIRE), summary(WIRE - 1)]), backend).catch((x: unknown) => x);
    expect({ name: (e as Error).name, rule: (e as { rule?: string }).rule, message: (e as Error).message }).toEqual({
      name: "BackendError",
      rule: "backend",
      message: refusal(backend, String(WIRE - 1)),
    });
  }
});

test("this wire on every primary, or COMMAND DOCS refused (an ACL user): the module backend", async () => {
  expect((await selectBackend(standIn([summary(WIRE), summary(WIRE)]), "module")).kind).toBe("module");
  const denied = new Error("NOPERM User w has no permissions to run the 'command|docs' command");
  expect((await selectBackend(standIn(denied), "auto")).kind).toBe("module");
});

let server: ServerHandle | undefined;
let cluster: ClusterHandle | undefined;
let other: ServerHandle | undefined;
beforeAll(async () => {
  if (!MODULE) return;
  [server, cluster] = await Promise.all([startServer({ module: MODULE }), startCluster({ primaries: 3, replicasPerPrimary: 0, module: MODULE })]);
  if (OTHER !== undefined && existsSync(OTHER)) other = await startServer({ module: OTHER });
}, 120_000);
afterAll(async () => {
  await Promise.all([server?.stop(), cluster?.stop(), other?.stop()]);
});

test.skipIf(!MODULE)("this build's module reads as this wire, on one server and on every primary of a cluster", async () => {
  for (const [cluster_, addresses] of [[false, [{ host: server!.host, port: server!.port }]], [true, cluster!.addresses]] as const) {
    const conn = await Connection.open({ addresses: [...addresses], cluster: cluster_ }, true);
    try {
      expect(await moduleWires(conn)).toEqual([WIRE]);
    } finally {
      conn.close();
    }
    const mq = await EchoMQ.connect({ addresses: [...addresses], cluster: cluster_, backend: "module" });
    expect(mq.backend).toBe("module");
    await mq.close();
  }
}, 60_000);

test.skipIf(OTHER === undefined)("a real build of another wire (EMQ_OTHER_WIRE_MODULE): refused at connect, both wires named", async () => {
  expect(other).toBeDefined();
  for (const backend of ["module", "auto"] as const) {
    const e = await EchoMQ.connect({ addresses: [{ host: other!.host, port: other!.port }], backend }).then(
      (mq) => mq.close().then(() => "connected"),
      (x: unknown) => x,
    );
    expect((e as Error).message).toMatch(new RegExp(`^backend "${backend}": the server's emq module speaks wire \\d+, this client wire ${WIRE}; `));
    expect((e as Error).message).not.toContain(`speaks wire ${WIRE},`);
  }
}, 60_000);
