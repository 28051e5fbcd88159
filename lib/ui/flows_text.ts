/**
 * A queue's flow figures as the queue page says them (`#flows`): its parents waiting for
 * children, its outbox's length and the relay lag (`mq.flowStats`).
 *
 * @module
 */
import type { FlowStats } from "../client/flow_stats.ts";
import { durationText } from "./relative.ts";

/** `f` in one line: `Flows: 2 parents waiting for children · outbox 5 entries, oldest waiting 3 s`. */
export function flowsText(f: FlowStats): string {
  const parents = `${f.waitingParents} parent${f.waitingParents === 1 ? "" : "s"} waiting for children`;
  const outbox = f.outbox === 0
    ? "outbox empty"
    : `outbox ${f.outbox} entr${f.outbox === 1 ? "y" : "ies"}, ${f.relayLagMs < 1000 ? "relayed within 1 s" : `oldest waiting ${durationText(f.relayLagMs)}`}`;
  return `Flows: ${parents} · ${outbox}`;
}
