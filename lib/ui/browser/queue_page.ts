/**
 * A queue's page, `/queues/<name>`, in the browser: its pieces — the counts, the throughput (per
 * second, and per minute over the hour), the
 * Claims group, the limits, the workers, the lanes, the requeue actions, the job tables with their selections (dead and scheduled: run
 * now, requeue, delete), the schedulers and the latest events — refreshed together every poll and after
 * every action. The body's `data-queue` names the queue (percent-encoded), `data-limit` the jobs per page.
 *
 * @module
 */
import { type CancelReply, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type QueueReply } from "../json_api.ts";
import { oneAtATime } from "./actions.ts";
import { eventsTable } from "./events.ts";
import { getJson, postJson } from "./fetch_json.ts";
import { CANCEL_TEXT } from "./job_page.ts";
import { jobTables } from "./job_tables.ts";
import { lanesTable } from "./lanes.ts";
import { limitsControl } from "./limits.ts";
import { minutesChart } from "./minutes.ts";
import { pauseControl } from "./pause_control.ts";
import { poll } from "./poll.ts";
import { queueCounts } from "./queue_counts.ts";
import { requeueControls } from "./requeue.ts";
import { schedulersTable } from "./schedulers.ts";
import { selectionControls } from "./selection.ts";
import { throughput } from "./throughput.ts";
import { workersTable } from "./workers.ts";

/** Makes the page live. */
export function queuePage(): void {
  // percent-encoded by the server: an attribute's CR (or CRLF) would be read back as LF
  const name = decodeURIComponent(document.body.dataset.queue ?? "");
  const limit = Math.min(MAX_PAGE_SIZE, Math.max(1, Number(document.body.dataset.limit) || DEFAULT_PAGE_SIZE));
  const act = oneAtATime(() => refreshAll());
  const showPaused = pauseControl(name, act);
  const showLimits = limitsControl(name, act);
  const requeue = requeueControls(name, act);
  const showCounts = queueCounts();
  const showRate = throughput();
  const showMinutes = minutesChart();
  const selections = {
    dead: selectionControls(name, "dead", act),
    scheduled: selectionControls(name, "scheduled", act),
    completed: selectionControls(name, "completed", act),
  };
  const cancel = (id: string): void => void act(async () => CANCEL_TEXT[(await postJson<CancelReply>("api/cancel", { name, id })).outcome](id));
  const tables = jobTables({ name, limit, requeue: (id) => requeue.one(id), cancel, requeueAll: requeue.allButton, selections });
  const refreshSchedulers = schedulersTable(name, act);
  const refreshWorkers = workersTable(name);
  const refreshLanes = lanesTable(name, act);
  const refreshEvents = eventsTable(name);

  const refreshQueue = async (): Promise<void> => {
    const q = await getJson<QueueReply>(`api/queue?name=${encodeURIComponent(name)}`);
    showCounts(q);
    showPaused(q.paused);
    showLimits(q.limits);
    showRate(q.rate);
    showMinutes(q.minutes);
    requeue.showDead(q.counts.dead);
  };
  const refreshAll = async (): Promise<void> => {
    await Promise.all([refreshQueue(), ...tables.map((t) => t.refresh()), refreshSchedulers(), refreshWorkers(), refreshLanes(), refreshEvents()]);
  };
  poll(refreshAll);
}
