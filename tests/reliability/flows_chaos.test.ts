/**
 * The flows chaos proof (issue 36), short: per backend, on a 3-primary cluster, a few rounds of
 * random flows whose relay processes are SIGKILLed between APPLY and UNBOX (and at the other
 * steps) and whose worker process is SIGKILLed mid-settle (tests/reliability/_flows_chaos.ts): no
 * child lost or made twice, each parent woken once and run after its children, no outbox entry
 * or waiting parent left. The long run: `bun tools/flows_chaos.ts --trials 500`.
 */
import { expect, test } from "bun:test";
import { type ClusterHandle, moduleIfBuilt, startCluster } from "../../tools/embedded/mod.ts";
import { runChaos } from "./_flows_chaos.ts";
import { BACKENDS, useClosers } from "./_server.ts";

const TRIALS = 20;
let site: ClusterHandle | undefined;
useClosers(() => site?.stop());

for (const backend of BACKENDS) {
  test(`${backend}: relays killed between apply and acknowledge, a worker killed mid-settle — nothing lost, nothing twice`, async () => {
    site ??= await startCluster({ primaries: 3, module: moduleIfBuilt() });
    const f = await runChaos({ addresses: [...site.addresses], cluster: true }, backend, TRIALS, 36);
    console.log(
      `[flows_chaos ${backend}] ${f.trials} trials in ${f.rounds} rounds, ${f.children} children: relay kills ` +
        `${JSON.stringify(f.relayKills)}, worker kills ${JSON.stringify(f.workerKills)}; reruns ${f.rerunChildren}/${f.rerunParents}`,
    );
    expect(f.problems).toEqual([]);
    expect(f.trials).toBe(TRIALS);
    expect([f.lost, f.duplicates, f.wokenWrong, f.early, f.left]).toEqual([0, 0, 0, 0, 0]);
  }, 240_000);
}
