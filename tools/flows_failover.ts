/**
 * The flows failover proof of issue 36 (tests/reliability/_flows_failover.ts): `--flows` flows
 * (a parent, 4 children in 4 queues over the 3 primaries, a grandchild under the first child) on a
 * 3-primary cluster with replicas started on loopback, workers in 2 processes; one worker process
 * SIGKILLed at 30 % of the flows, the parent queue's primary SIGKILLed at 50 % and failed over.
 * Per backend (`--backend module|scripts|both`, default both; the module only when built). Prints
 * the counts; exits 1 when a parent is stuck or ran early, a count does not balance, or an outbox
 * entry is left.
 *
 * Run: `node_modules/.bin/bun tools/flows_failover.ts --flows 500 [--backend both]`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { runFailover } from "../tests/reliability/_flows_failover.ts";
import { moduleBuilt } from "./embedded/mod.ts";

const { values } = parseArgs({ options: { flows: { type: "string", default: "500" }, backend: { type: "string", default: "both" } } });
const backends = (values.backend === "both" ? ["module", "scripts"] : [values.backend]).filter((b) => b === "scripts" || moduleBuilt()) as Array<
  "module" | "scripts"
>;
let failed = false;
for (const backend of backends) {
  const f = await runFailover(backend, Number(values.flows), (line) => console.log(`[${backend}] ${line}`));
  console.log(
    `[flows_failover ${backend}] ${f.flows} flows (${f.jobs} jobs) in ${Math.round(f.runMs / 1000)} s, ${f.flowRetries} flow calls sent again, ` +
      `promotion after ${f.promotionMs} ms | handlers run again ${f.reruns} (${f.rerunsSameAttempt} at the same attempt: a claim lost ` +
      `with the primary) | parents not run once ${f.parentsNotOnce} (run at attempt 1 more than once ${f.parentsWokenNotOnce}), children not run once ${f.childrenNotOnce} | run early ${f.early}, ` +
      `stuck ${f.stuck}, flows lost whole with the primary ${f.lostWithPrimary}, partly ${f.lostPartly}, left ${f.left}, unbalanced ${
        f.unbalanced.length === 0 ? "none" : f.unbalanced.join("; ")
      }`,
  );
  for (const p of f.problems) console.log(`  ${p}`);
  if (f.early + f.stuck + f.left + f.unbalanced.length > 0) failed = true;
}
process.exit(failed ? 1 : 0);
