/**
 * The paused / running badge, as the server renders it too (server/frame_html.ts).
 *
 * @module
 */
import { el } from "./dom.ts";

/** The paused / running badge. */
export function badge(paused: boolean): HTMLElement {
  return el("span", { class: "badge", "data-paused": String(paused) }, paused ? "paused" : "running");
}

/** Shows the badge for `paused` in `container`, replacing the one there only when it changed. */
export function showBadge(container: HTMLElement, paused: boolean): void {
  const b = container.firstElementChild as HTMLElement | null;
  if (b === null || b.dataset.paused !== String(paused)) container.replaceChildren(badge(paused));
}
