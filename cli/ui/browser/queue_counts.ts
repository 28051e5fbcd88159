/**
 * A queue page's numbers: its four counts (`#count-<state>`), its totals (`#total-<name>`) and the
 * note shown while the queue does not exist yet (`#missing`).
 *
 * @module
 */
import { COUNTED_STATES, type QueueReply } from "../../../lib/ui/json_api.ts";
import { $, setNumber } from "./dom.ts";

/** The page's counts and totals; the function it returns shows a queue's. */
export function queueCounts(): (q: QueueReply) => void {
  const missing = $("missing");
  return (q) => {
    missing.hidden = q.exists;
    for (const k of COUNTED_STATES) setNumber($(`count-${k}`), q.counts[k]);
    for (const [k, v] of Object.entries(q.totals)) setNumber($(`total-${k}`), v);
  };
}
