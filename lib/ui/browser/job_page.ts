/**
 * A job's page in the browser: its Delete, Retry now (dead), Run now (scheduled) and Cancel (pending, scheduled, active, a flow's
 * waiting parent) buttons (rendered by the server only where they apply) as same-origin POSTs; after one, the page is read again
 * (the server renders it). A running job's log stays live (job_log.ts).
 *
 * @module
 */
import type { CancelReply, RemoveReply, RequeueReply, RunReply } from "../json_api.ts";
import { postJson } from "./fetch_json.ts";
import { liveLog } from "./job_log.ts";
import { announce, cannotRefresh } from "./status.ts";

/** What a cancel of `id` did, in words. */
export const CANCEL_TEXT: Readonly<Record<CancelReply["outcome"], (id: string) => string>> = {
  cancelled: (id) => `Cancelled ${id}: it was waiting, and is buried now.`,
  aborting: (id) => `Cancelled ${id}: it is buried now, and its handler is told to stop at its worker's next heartbeat.`,
  finished: (id) => `${id} had finished already: not cancelled.`,
  missing: (id) => `${id} was gone already.`,
};

/** Wires the page's buttons. */
export function jobPage(): void {
  const name = decodeURIComponent(document.body.dataset.queue ?? "");
  const id = document.body.dataset.job ?? "";
  const wire = (button: string, run: () => Promise<string>): void => {
    document.getElementById(button)?.addEventListener("click", () =>
      void run().then((said) => {
        announce(said);
        location.reload();
      }, cannotRefresh));
  };
  wire("job-delete", async () => {
    const r = await postJson<RemoveReply>("api/remove", { name, id });
    return r.removed ? `Deleted ${id}.` : `${id} was gone already.`;
  });
  wire("job-retry", async () => {
    const r = await postJson<RequeueReply>("api/requeue", { name, ids: [id] });
    return r.moved === 1 ? `${id} is pending again.` : `${id} was not requeued (no longer dead).`;
  });
  wire("job-run", async () => {
    const r = await postJson<RunReply>("api/run", { name, ids: [id] });
    return r.moved === 1 ? `${id} runs now: it is pending.` : `${id} was not moved.`;
  });
  wire("job-cancel", async () => {
    const r = await postJson<CancelReply>("api/cancel", { name, id });
    return CANCEL_TEXT[r.outcome](id);
  });
  liveLog(name, id);
  document.body.dataset.ready = "true";
}
