/**
 * A running job's log on its page (`#job-log[data-live]`, rendered by job_html.ts while the job is
 * active): polled from `api/logs` every `data-poll-ms` (poll.ts), new lines shown without a reload;
 * once the job no longer runs, the page is read again (the server renders its final state).
 *
 * @module
 */
import type { LogsReply } from "../json_api.ts";
import { logCountText } from "../log_text.ts";
import { visible } from "../visible.ts";
import { $ } from "./dom.ts";
import { getJson } from "./fetch_json.ts";
import { poll } from "./poll.ts";

/** Keeps the log of job `id` of queue `name` live while the page says it runs. */
export function liveLog(name: string, id: string): void {
  const pre = document.getElementById("job-log");
  if (pre === null || pre.dataset.live !== "true") return;
  const count = $("job-log-count");
  let ended = false;
  poll(async () => {
    if (ended) return;
    const r = await getJson<LogsReply>(`api/logs?name=${encodeURIComponent(name)}&id=${encodeURIComponent(id)}`);
    const text = r.lines.length === 0 ? "—" : r.lines.map(visible).join("\n");
    if (pre.textContent !== text) pre.textContent = text;
    const note = logCountText(r.total, r.lines.length);
    if (count.textContent !== note) count.textContent = note;
    if (r.state !== "active") {
      ended = true;
      location.reload();
    }
  });
}
