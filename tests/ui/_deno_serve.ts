// Under Deno: the package's dashboard mounted with Deno.serve on a free loopback port, for the
// server at argv[0], with the base path argv[1] and the token argv[2]; prints `listening <port>`.
import { EchoMQ } from "../../client.ts";
import { dashboard } from "../../ui.ts";

/** The part of Deno's API this script uses (typed here so `tsc` with Bun's types passes). */
declare const Deno: {
  readonly args: string[];
  serve(
    options: { hostname: string; port: number; onListen(addr: { port: number }): void },
    handler: (request: Request) => Promise<Response>,
  ): { shutdown(): Promise<void> };
  addSignalListener(signal: "SIGTERM", listener: () => void): void;
};

const [url, basePath, token] = Deno.args as [string, string, string];
const mq = await EchoMQ.connect({ url });
const ui = dashboard(mq, { basePath, token });
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: ({ port }) => console.log(`listening ${port}`) }, (request) => ui(request));
await new Promise((stop) => Deno.addSignalListener("SIGTERM", () => stop(null)));
ui.close();
await server.shutdown();
await mq.close();
