/**
 * How a queue page's actions run (requeue, pause, resume): one at a time — a click meanwhile is
 * ignored; the buttons stay enabled, so focus stays where it is — with the body `aria-busy` while
 * one runs, its result announced, then everything refreshed.
 *
 * @module
 */
import { announce, cannotRefresh, message } from "./status.ts";

/** Runs an action that resolves with what to announce. */
export type Act = (run: () => Promise<string>) => Promise<void>;

/** An {@link Act} that runs one action at a time and calls `refresh` after each. */
export function oneAtATime(refresh: () => Promise<void>): Act {
  let busy = false;
  return async (run) => {
    if (busy) return;
    busy = true;
    document.body.setAttribute("aria-busy", "true");
    try {
      announce(await run());
    } catch (e) {
      announce(`Failed: ${message(e)}`, "error");
    }
    await refresh().catch(cannotRefresh);
    document.body.removeAttribute("aria-busy");
    busy = false;
  };
}
