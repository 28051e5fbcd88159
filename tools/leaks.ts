/**
 * The test command's last step: every server a test started must be gone once its host is. Kills
 * and lists the servers whose host is gone (see lib/server/orphans.ts); exits 1 if any server
 * was still running, so a leak fails the run instead of lingering on the machine.
 *
 * @module
 */
import { sweepOrphans } from "./embedded/mod.ts";

const orphans = sweepOrphans();
const running = orphans.filter((o) => o.pid !== null);
for (const o of orphans) {
  console.log(`${o.pid === null ? "left a directory" : `left valkey-server pid ${o.pid} running`}: ${o.dir} (host pid ${o.host} gone)`);
}
console.log(`servers left running by the tests: ${running.length}`);
process.exit(running.length > 0 ? 1 : 0);
