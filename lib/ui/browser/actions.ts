/**
 * How a queue page's actions run (requeue, pause, resume): one at a time — a click while one is
 * sent is ignored (no double submit); the buttons stay enabled, so focus stays where it is — with
 * the body `aria-busy` while one runs and the page refreshes after it, its result announced. A click
 * during that refresh runs: a user who saw the result and pressed again is never dropped.
 *
 * @module
 */
import { announce, cannotRefresh, message } from "./status.ts";

/** Runs an action that resolves with what to announce. */
export type Act = (run: () => Promise<string>) => Promise<void>;

/** An {@link Act} that runs one action at a time and calls `refresh` after each. */
export function oneAtATime(refresh: () => Promise<void>): Act {
  let busy = false;
  let running = 0; // actions sent or refreshing after them: aria-busy until the last is done
  return async (run) => {
    if (busy) return;
    busy = true;
    running++;
    document.body.setAttribute("aria-busy", "true");
    let said: string;
    let kind: "info" | "error" = "info";
    try {
      said = await run();
    } catch (e) {
      [said, kind] = [`Failed: ${message(e)}`, "error"];
    }
    busy = false;
    announce(said, kind);
    await refresh().catch(cannotRefresh);
    if (--running === 0) document.body.removeAttribute("aria-busy");
  };
}
