/**
 * What the dashboard's pages share: the frame (head, header with the navigation, the live status
 * line), the paused / running badge and the count columns. The pages' script
 * (`/dashboard.js`, browser/dashboard.ts) reads its settings from the body's `data-*` attributes.
 *
 * @module
 */
import { COUNTED_STATES } from "../shared/json_api.ts";
import { htmlDocument } from "./document_html.ts";
import { esc } from "./responses.ts";
import { DASHBOARD_STYLE, STYLE } from "./style.ts";

/** How the pages behave. */
export interface PageOptions {
  /** How often a page polls the API, ms (default 1000). */
  readonly pollMs?: number;
}

/** The page frame: head, header with the navigation, main. */
export function frame(title: string, current: "queues" | "queue", body: Record<string, string>, main: string): string {
  const data = Object.entries(body).map(([k, v]) => ` data-${k}="${esc(v)}"`).join("");
  const link = (href: string, text: string, here: boolean) => `<a href="${href}"${here ? ' aria-current="page"' : ""}>${text}</a>`;
  const head = { title, extra: `<link rel="icon" href="data:,">\n`, style: `${STYLE}${DASHBOARD_STYLE}`, script: "/dashboard.js" };
  return htmlDocument(head, `<body${data}>
<a class="skip" href="#main">Skip to content</a>
<header>
<h1>EchoMQ</h1>
<nav aria-label="emq ui">${link("/", "Key panel", false)} ${link("/queues", "Queues", current === "queues")} ${
    link("/metrics", "Metrics", false)
  }</nav>
</header>
<main id="main">
${main}
<p id="status" class="status" role="status" aria-live="polite"></p>
</main>
</body>`);
}

/** A name as a heading or a label: its first letter capitalised (`dead` → `Dead`). */
export function capitalized(name: string): string {
  return `${name[0]!.toUpperCase()}${name.slice(1)}`;
}

/** The count columns: each state and its label. */
export const COLUMNS: ReadonlyArray<readonly [(typeof COUNTED_STATES)[number], string]> = COUNTED_STATES.map((k) => [
  k,
  capitalized(k),
]);

/** A paused / running badge (the page script renders the same). */
export function badge(paused: boolean): string {
  return `<span class="badge" data-paused="${paused}">${paused ? "paused" : "running"}</span>`;
}
