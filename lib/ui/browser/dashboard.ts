/**
 * The dashboard in the browser (bundled ahead of time by tools/gen_ui.ts into `dashboard.js`):
 * keeps the Queues page (queues_page.ts) and `queues/<name>` (queue_page.ts) live by polling the
 * JSON API, pages through a queue's jobs, and runs the actions (requeue one, requeue all, pause,
 * resume; on a job's page, job_page.ts: delete, retry now) as same-origin POSTs. Every piece of server data reaches the DOM as text (`textContent`), never as
 * markup. The body's `data-page` says which page this is.
 *
 * `document.body.dataset.ready` is set after the first refresh and `refreshes` counts them, so a
 * test can wait for the next one (poll.ts).
 *
 * @module
 */
import { jobPage } from "./job_page.ts";
import { queuePage } from "./queue_page.ts";
import { queuesPage } from "./queues_page.ts";

if (document.body.dataset.page === "queues") queuesPage();
else if (document.body.dataset.page === "queue") queuePage();
else if (document.body.dataset.page === "job") jobPage();
