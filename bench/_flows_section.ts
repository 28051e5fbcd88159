/**
 * Section 20 of bench/RESULTS.md, from bench/flows.ts's report: F1 (a parent with N children: add
 * latency, add → parent done, server CPU per child; EchoMQ module and scripts beside BullMQ's
 * `FlowProducer`), F3 (a cross-slot edge against a same-slot edge) and F6 (a fan-in's parent side).
 * Apart from bench/run.ts so that a run of bench/flows.ts alone renders the same text.
 *
 * @module
 */

const f0 = (x: number): string => Math.round(x).toLocaleString("en-US");
const f1 = (x: number): string => x.toFixed(1);
const f2 = (x: number): string => x.toFixed(2);
const met = (ok: boolean): string => (ok ? "met" : "**missed**");

/** F2's paragraph (bench/flows_cluster.ts's report), or a line saying it was not run. */
function f2Text(r: Record<string, any> | undefined): string {
  if (r === undefined) return "F2 (a 3-primary cluster, children in 12 queues) not in this run (`bun bench/flows_cluster.ts`).\n";
  const each = (s: string): string => r.perRound[s].map((m: { flowsPerSec: number }) => f1(m.flowsPerSec)).join(", ");
  const us = (s: string): string => r.perRound[s].map((m: { serverUsecPerFlow: number }) => f0(m.serverUsecPerFlow)).join(", ");
  const cl = (s: string): string =>
    r.perRound[s].map((m: { clientUsecPerFlow?: number }) => (m.clientUsecPerFlow === undefined ? "—" : f0(m.clientUsecPerFlow))).join(", ");
  const ratio = r.moduleOverBullmq.median as number;
  return `
**F2** — a local 3-primary cluster: ${f0(r.flows)} flows, each a parent and one child in each of ${r.queues} queues spread 4 to a primary
(EchoMQ: every queue its own slot, every edge through the parent's outbox, relays every ${r.relayMs} ms; BullMQ: every
queue under one shared hashtag, \`{f2}\`, the only way its flows run on a cluster), ${r.inFlight} adds in flight, workers of
concurrency 50 in all, all in one client process. Flows/s per round (first add → last parent done), server µs per
flow (all primaries), client µs per flow (the one process: producer, workers, relays, the connections' threads):

| system | flows/s | server µs per flow | client µs per flow |
| --- | --- | --- | --- |
| EchoMQ module | ${each("module")} | ${us("module")} | ${cl("module")} |
| EchoMQ scripts | ${each("scripts")} | ${us("scripts")} | ${cl("scripts")} |
| BullMQ FlowProducer | ${each("bullmq")} | ${us("bullmq")} | ${cl("bullmq")} |

| target | measured | verdict |
| --- | ---: | --- |
| F2: flows/s ≥ 3× BullMQ's (module; median of per-round ratios) | ${f2(ratio)}× (${r.moduleOverBullmq.rounds.map(f2).join(", ")}) | ${met(ratio >= 3)} |
| (scripts, no target) | ${f2(r.scriptsOverBullmq.median)}× | — |
`;
}

/** The section's text (its heading first); `load` the machine's load averages when the run started. */
export function flowsSection(r: Record<string, any> | undefined, load: readonly number[]): string {
  const head = "## 21. Flows beside BullMQ's FlowProducer (bench/flows.ts)\n\n";
  if (r === undefined) return head + "Not in this run (run it alone: `bun bench/flows.ts`).\n";
  const sizes = Object.keys(r.f1);
  const row = (n: string, s: string, label: string): string => {
    const m = r.f1[n][s];
    return `| ${f0(Number(n))} | ${label} | ${f1(m.addMs)} | ${f0(m.doneMs)} | ${f0(m.cpuPerChildUs)} |`;
  };
  const rows = sizes.flatMap((n) => [row(n, "module", "EchoMQ module"), row(n, "scripts", "EchoMQ scripts"), row(n, "bullmq", "BullMQ FlowProducer")]);
  const big = sizes.at(-1)!;
  const done = r.f1Ratios[big].moduleDoneOverBullmq as number;
  const f6 = r.f6;
  return head + `One embedded server (module loaded; the scripts on the same server), load averages ${load.map(f2).join(", ")} on this
shared 2-core machine when the run started — figures from a loaded machine, ratios the ones to read.
The median of ${r.rounds} round${r.rounds === 1 ? "" : "s"}.

**F1** — a parent in one queue, N children in another (every edge crosses queues), workers of
concurrency 50 on both queues; EchoMQ's workers relay their queues' outboxes every ${r.relayMs} ms (\`relay:
{ intervalMs: ${r.relayMs} }\`; the default 250 ms adds up to two intervals to "done"). Add: the \`flow\` /
\`FlowProducer.add\` call; done: from the add's start to the parent's handler finishing; server CPU
per child: the server process's CPU over the whole flow (relays' polling included) ÷ N.

| N | system | add ms | add → parent done ms | server µs per child |
| ---: | --- | ---: | ---: | ---: |
${rows.join("\n")}

**F3** — ${f0(r.f3.edges)} flows of one parent and one child (module): the child in the parent's queue (a same-slot
edge: FLOW makes it, its ACK records its outcome, no outbox) ${f0(r.f3.sameUsPerFlow)} µs of server CPU per flow; the child
in another queue (a cross-slot edge: FLOW's outbox entry, a relay's OUTBOX, APPLY and UNBOX each way) ${f0(r.f3.crossUsPerFlow)} µs per flow: **${
    f2(r.f3.ratio)
  }×** (50 flows in flight: a relay round leases, applies and
acknowledges up to 100 entries in three calls, so the outbox's cost per edge is small).

**F6** — a fan-in of ${f0(f6.fan)} children (not run), the parent's side by \`MEMORY USAGE\`: EchoMQ's parent row
(streamed by \`addChildren\`, 1,000 a call) ${f0(f6.module)} bytes (${f1(f6.module / f6.fan)} per child: a \`child:<i>\` field each);
BullMQ's \`dependencies\` set ${f0(f6.bullmq.dependencies)} bytes (one \`FlowProducer.add\`; its parent hash ${f0(f6.bullmq.row)} bytes).

| target | measured | verdict |
| --- | ---: | --- |
| F1: add → parent done ≤ 0.5× BullMQ's at N = ${f0(Number(big))} (module) | ${f2(done)}× | ${met(done <= 0.5)} |
| F3: a cross-slot edge ≤ 2× a same-slot edge's server CPU | ${f2(r.f3.ratio)}× | ${met(r.f3.ratio <= 2)} |
| F6: the parent's side of a ${f0(f6.fan)}-child fan-in ≤ 64 KiB | ${f0(f6.module)} B | ${met(f6.module <= 65536)} (the packed bitset is not built) |

${f2Text(r.f2)}`;
}
