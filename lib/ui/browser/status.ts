/**
 * The dashboard's live status line (`#status`, `role="status"`): what an action did, and a
 * refresh that failed.
 *
 * @module
 */
import { $ } from "./dom.ts";
import { StaleReply } from "./fetch_json.ts";

/** An error's message (or the thrown value as text). */
export const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Says `text` in the live status line (an error in red). */
export function announce(text: string, kind: "info" | "error" = "info"): void {
  const status = $<HTMLElement>("status");
  status.dataset.kind = kind;
  // The same text twice in a row is still announced: clear, then set on the next frame.
  status.textContent = "";
  requestAnimationFrame(() => (status.textContent = text));
}

/** Says that a refresh failed, and why (a reply dropped as stale is no failure: nothing to say). */
export function cannotRefresh(e: unknown): void {
  if (!(e instanceof StaleReply)) announce(`Cannot refresh: ${message(e)}`, "error");
}
