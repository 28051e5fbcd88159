/**
 * Free loopback ports. A cluster node also listens on its port + 10000 (the cluster bus), so a
 * port is only handed out when both are free.
 *
 * @module
 */
import { createServer } from "node:net";

/** The only address the launcher ever binds or targets. */
export const LOOPBACK = "127.0.0.1" as const;

const handedOut = new Set<number>();

/** Whether `port` can be bound on the loopback address right now. */
export function portFree(port: number): Promise<boolean> {
  return new Promise<boolean>((done) => {
    const srv = createServer();
    srv.once("error", () => done(false));
    srv.listen({ port, host: LOOPBACK, exclusive: true }, () => {
      srv.close(() => done(true));
    });
  });
}

/**
 * A loopback port that is free now, together with `port + 10000` (the cluster bus), and that this
 * process has not handed out before. Ports are drawn at random from 16000–29999 (so the bus port
 * stays below the usual ephemeral range) to make clashes with parallel runs unlikely; the launcher
 * still retries when a server fails to bind.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 16000 + Math.floor(Math.random() * 14000);
    if (handedOut.has(port)) continue;
    if ((await portFree(port)) && (await portFree(port + 10000))) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error("no free loopback port pair found");
}
