/**
 * The flows chaos proof of issue 36 (tests/reliability/_flows_chaos.ts): `--trials` random flows
 * whose relays are SIGKILLed between APPLY and acknowledgement (and at the other steps) and whose
 * worker is SIGKILLed mid-settle, on a 3-primary cluster (or `--standalone`) started on loopback,
 * per backend (`--backend module|scripts|both`, default both; the module only when built). Prints
 * the counts of each backend; exits 1 when a child was lost or made twice, a parent woken other
 * than once or run early, or an outbox left.
 *
 * Run: `node_modules/.bin/bun tools/flows_chaos.ts --trials 500 [--seed N] [--backend both] [--standalone]`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { runChaos } from "../tests/reliability/_flows_chaos.ts";
import { moduleIfBuilt, startCluster, startServer } from "./embedded/mod.ts";

const { values } = parseArgs({
  options: {
    trials: { type: "string", default: "500" },
    seed: { type: "string", default: "36" },
    backend: { type: "string", default: "both" },
    standalone: { type: "boolean", default: false },
  },
});
const module = moduleIfBuilt();
const backends = (values.backend === "both" ? ["module", "scripts"] : [values.backend]).filter((b) => b === "scripts" || module !== false) as Array<
  "module" | "scripts"
>;
let failed = false;
for (const backend of backends) {
  const started = Date.now();
  const site = values.standalone
    ? await startServer({ module }).then((s) => ({ where: { addresses: [{ host: s.host, port: s.port }], cluster: false }, stop: () => s.stop() }))
    : await startCluster({ primaries: 3, module }).then((c) => ({ where: { addresses: [...c.addresses], cluster: true }, stop: () => c.stop() }));
  try {
    const f = await runChaos(site.where, backend, Number(values.trials), Number(values.seed), (line) => console.log(`[${backend}] ${line}`));
    const topology = values.standalone ? "standalone" : "cluster";
    console.log(
      `[flows_chaos ${backend}/${topology}] seed ${values.seed}: ${f.trials} trials in ${f.rounds} rounds, ${f.children} children ` +
        `(${f.failing} planned to fail), ${Math.round((Date.now() - started) / 1000)} s | relay kills ${JSON.stringify(f.relayKills)} | ` +
        `worker kills ${JSON.stringify(f.workerKills)} | rerun after a kill: ${f.rerunChildren} children, ${f.rerunParents} parents | ` +
        `lost ${f.lost}, duplicates ${f.duplicates}, parents woken other than once ${f.wokenWrong}, run early ${f.early}, left ${f.left}`,
    );
    for (const p of f.problems) console.log(`  ${p}`);
    if (f.lost + f.duplicates + f.wokenWrong + f.early + f.left > 0) failed = true;
  } finally {
    await site.stop();
  }
}
process.exit(failed ? 1 : 0);
