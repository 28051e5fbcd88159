/**
 * A queue page's numbers: its four counts (`#count-<state>`), its totals (`#total-<name>`), how
 * long its oldest pending job has waited (`#oldest`), its wait and run percentiles (`#latency`), its
 * flows (`#flows`: parents waiting, the outbox's length and relay lag) and
 * the note shown while the queue does not exist yet (`#missing`).
 *
 * @module
 */
import { COUNTED_STATES, type QueueReply } from "../json_api.ts";
import { latencyText } from "../latency_text.ts";
import { flowsText } from "../flows_text.ts";
import { relative } from "../relative.ts";
import { $, setNumber } from "./dom.ts";

/** The page's counts and totals; the function it returns shows a queue's. */
export function queueCounts(): (q: QueueReply) => void {
  const missing = $("missing");
  const oldest = $("oldest");
  const latency = $("latency");
  const flows = $("flows");
  return (q) => {
    missing.hidden = q.exists;
    const waited = q.oldestPendingAt === undefined ? "Oldest pending: none waiting" : `Oldest pending: admitted ${relative(q.oldestPendingAt, Date.now())}`;
    if (oldest.textContent !== waited) oldest.textContent = waited;
    const lat = latencyText(q.latency.wait, q.latency.run);
    if (latency.textContent !== lat) latency.textContent = lat;
    const f = flowsText(q.flows);
    if (flows.textContent !== f) flows.textContent = f;
    for (const k of COUNTED_STATES) setNumber($(`count-${k}`), q.counts[k]);
    for (const [k, v] of Object.entries(q.totals)) setNumber($(`total-${k}`), v);
  };
}
