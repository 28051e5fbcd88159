/**
 * How a dashboard page stays live: it refreshes every `data-poll-ms` of its body (at least 100,
 * default 1000), one refresh at a time. `document.body.dataset.ready` is set after the first and
 * `refreshes` counts them, so a test can wait for the next one.
 *
 * @module
 */
import { StaleReply } from "./fetch_json.ts";
import { announce, cannotRefresh } from "./status.ts";

/** Polls `refresh` every pollMs (never two at once); reports lost and regained contact. */
export function poll(refresh: () => Promise<void>): void {
  const body = document.body;
  const pollMs = Math.max(100, Number(body.dataset.pollMs) || 1000);
  let failing = false;
  const run = async (): Promise<void> => {
    try {
      await refresh();
      if (failing) announce("In contact with the server again.");
      failing = false;
    } catch (e) {
      // a reply dropped as stale (it overlapped an action) says nothing of the contact
      if (!(e instanceof StaleReply)) {
        if (!failing) cannotRefresh(e);
        failing = true;
      }
    }
    body.dataset.refreshes = String(Number(body.dataset.refreshes ?? "0") + 1);
    body.dataset.ready ??= "true";
    setTimeout(run, pollMs);
  };
  void run();
}
