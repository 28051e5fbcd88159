/**
 * What the dashboard's pages share: the frame (head, header with the navigation, the live status
 * line), the paused / running badge and the count columns. The pages' script
 * (`/dashboard.js`, browser/dashboard.ts) reads its settings from the body's `data-*` attributes.
 *
 * @module
 */
import { COUNTED_STATES } from "./json_api.ts";
import { htmlDocument } from "./document_html.ts";
import { esc } from "./responses.ts";
import { DASHBOARD_STYLE, STYLE } from "./style.ts";

/** How the pages behave. */
export interface PageOptions {
  /** How often a page polls the API, ms (default 1000). */
  readonly pollMs?: number;
  /** The base path the dashboard is mounted under (`""` at the root): the pages' `<base>`. */
  readonly basePath?: string;
  /** No action is shown (the server answers none either). */
  readonly readOnly?: boolean;
  /** Links the navigation adds after its own. */
  readonly links?: ReadonlyArray<{ readonly href: string; readonly text: string }>;
}

/** Hides every action of a read-only dashboard. */
const READ_ONLY_STYLE = `#pause, #resume, #requeue-all, button[data-key^="requeue:"], button[data-key^="unschedule:"], button[data-bulk], input.select, ` +
  `button[data-key^="lane:"], button[data-key^="cancel:"], #job-delete, #job-retry, #job-run, #job-cancel, #limit-form { display: none; }`;

/**
 * The `<base>` of every page: links, the script and the API calls are relative to it, so the
 * pages work under any base path.
 */
export function baseTag(options: PageOptions): string {
  return `<base href="${esc(`${options.basePath ?? ""}/`)}">\n`;
}

/** The page frame: head, header with the navigation, main. */
export function frame(title: string, current: "queues" | "queue", body: Record<string, string>, main: string, options: PageOptions = {}): string {
  const data = Object.entries({ ...body, ...(options.readOnly ? { "read-only": "true" } : {}) })
    .map(([k, v]) => ` data-${k}="${esc(v)}"`).join("");
  const link = (href: string, text: string, here: boolean) => `<a href="${esc(href)}"${here ? ' aria-current="page"' : ""}>${esc(text)}</a>`;
  const head = {
    title,
    extra: `${baseTag(options)}<link rel="icon" href="data:,">\n`,
    style: `${STYLE}${DASHBOARD_STYLE}${options.readOnly ? READ_ONLY_STYLE : ""}`,
    script: "dashboard.js",
  };
  const links = [
    link("./", "Queues", current === "queues"),
    link("metrics", "Metrics", false),
    ...(options.links ?? []).map((l) => link(l.href, l.text, false)),
  ];
  return htmlDocument(
    head,
    `<body${data}>
<a class="skip" href="#main">Skip to content</a>
<header>
<h1>EchoMQ</h1>
<nav aria-label="EchoMQ">${links.join(" ")}</nav>${options.readOnly ? `\n<p class="note">Read-only: no action is answered.</p>` : ""}
</header>
<main id="main">
${main}
<p id="status" class="status" role="status" aria-live="polite"></p>
</main>
</body>`,
  );
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
