/**
 * The dashboard in the browser (bundled by `bun build` into `/dashboard.js`): keeps `/queues` and
 * `/queues/<name>` live by polling the JSON API, pages through a queue's jobs, and runs the
 * actions (requeue one, requeue all, pause, resume) as same-origin POSTs. Every piece of server
 * data reaches the DOM as text (`textContent`), never as markup.
 *
 * `document.body.dataset.ready` is set after the first refresh and `refreshes` counts them, so a
 * test can wait for the next one.
 *
 * @module
 */
import {
  type CountsView,
  type ErrorReply,
  type JobRow,
  type JobsReply,
  LISTED_STATES,
  type ListedState,
  type PauseReply,
  type QueueReply,
  type QueueRow,
  type QueuesReply,
  rateSummary,
  type RequeueReply,
  shown,
  sparkPoints,
} from "./api.ts";

const $ = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`the page has no #${id}`);
  return el as T;
};

/** Makes an element with text (never markup) and attributes. */
function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Array<Node | string>
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...children);
  return e;
}

const body = document.body;
const pollMs = Math.max(100, Number(body.dataset.pollMs) || 1000);
const status = $<HTMLElement>("status");

/** Says `text` in the live status line (an error in red). */
function announce(text: string, kind: "info" | "error" = "info"): void {
  status.dataset.kind = kind;
  // The same text twice in a row is still announced: clear, then set on the next frame.
  status.textContent = "";
  requestAnimationFrame(() => (status.textContent = text));
}

class HttpError extends Error {}

async function getJson<T>(url: string): Promise<T> {
  const r = await fetch(url, { headers: { accept: "application/json" } });
  const value = (await r.json()) as T | ErrorReply;
  if (!r.ok) throw new HttpError((value as ErrorReply).error ?? `${url}: ${r.status}`);
  return value as T;
}

async function postJson<T>(url: string, payload: unknown): Promise<T> {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(payload) });
  const value = (await r.json().catch(() => ({ error: `${url}: ${r.status}` }))) as T | ErrorReply;
  if (!r.ok) throw new HttpError((value as ErrorReply).error ?? `${url}: ${r.status}`);
  return value as T;
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Polls `refresh` every pollMs (never two at once); reports lost and regained contact. */
function poll(refresh: () => Promise<void>): void {
  let failing = false;
  const run = async (): Promise<void> => {
    try {
      await refresh();
      if (failing) announce("In contact with the server again.");
      failing = false;
    } catch (e) {
      if (!failing) announce(`Cannot refresh: ${message(e)}`, "error");
      failing = true;
    }
    body.dataset.refreshes = String(Number(body.dataset.refreshes ?? "0") + 1);
    body.dataset.ready ??= "true";
    setTimeout(run, pollMs);
  };
  void run();
}

/** The paused / running badge. */
function badge(paused: boolean): HTMLElement {
  return el("span", { class: "badge", "data-paused": String(paused) }, paused ? "paused" : "running");
}

/** Sets a number's text (only when it changed, so a screen reader hears only changes). */
function setNumber(e: HTMLElement, n: number): void {
  const text = String(n);
  if (e.textContent !== text) e.textContent = text;
  e.dataset.nonzero = String(n > 0);
}

/** A time: `hh:mm:ss` today, else `yyyy-mm-dd hh:mm`, the full time as its title. */
function timeEl(ms: number | undefined): Node {
  if (ms === undefined || ms <= 0) return document.createTextNode("—");
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  const today = new Date().toDateString() === d.toDateString();
  const text = today
    ? `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
    : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return el("time", { datetime: d.toISOString(), title: d.toString() }, text);
}

/** Focus kept across a re-render: the focused element's `data-key`, and its index among keyed ones. */
function focusedKey(scope: HTMLElement): { key: string; index: number } | null {
  const active = document.activeElement as HTMLElement | null;
  if (active === null || !scope.contains(active) || active.dataset.key === undefined) return null;
  const keyed = Array.from(scope.querySelectorAll<HTMLElement>("[data-key]"));
  return { key: active.dataset.key, index: keyed.indexOf(active) };
}

function restoreFocus(scope: HTMLElement, was: { key: string; index: number } | null, fallback: HTMLElement): void {
  if (was === null) return;
  const keyed = Array.from(scope.querySelectorAll<HTMLElement>("[data-key]"));
  const same = keyed.find((e) => e.dataset.key === was.key);
  const near = same ?? keyed[Math.min(was.index, keyed.length - 1)];
  (near ?? fallback).focus();
}

// ---------------------------------------------------------------------------------------------
// /queues

function queuesPage(): void {
  const table = $<HTMLTableElement>("queues");
  const tbody = table.tBodies[0]!;
  const cols = ["pending", "active", "scheduled", "dead"] as const;

  const row = (q: QueueRow): HTMLTableRowElement => {
    const tr = el("tr", { "data-queue": q.name });
    tr.append(el("th", { scope: "row" }, el("a", { class: "qname", href: q.href, "data-key": `queue:${q.href}` }, shown(q.name))));
    for (const c of cols) tr.append(el("td", { class: "num", "data-col": c }));
    tr.append(el("td", { "data-col": "state" }));
    return tr;
  };
  const fill = (tr: HTMLTableRowElement, q: QueueRow): void => {
    for (const c of cols) setNumber(tr.querySelector<HTMLElement>(`td[data-col="${c}"]`)!, q[c]);
    const state = tr.querySelector<HTMLElement>('td[data-col="state"]')!;
    const b = state.firstElementChild as HTMLElement | null;
    if (b === null || b.dataset.paused !== String(q.paused)) state.replaceChildren(badge(q.paused));
  };

  poll(async () => {
    const { queues } = await getJson<QueuesReply>("/api/queues");
    const rows = Array.from(tbody.rows).filter((r) => r.dataset.queue !== undefined);
    const same = rows.length === queues.length && rows.every((r, i) => r.dataset.queue === queues[i]!.name);
    if (!same) {
      const before = new Set(rows.map((r) => r.dataset.queue!));
      const focus = focusedKey(tbody);
      const byName = new Map(rows.map((r) => [r.dataset.queue!, r]));
      const next = queues.map((q) => byName.get(q.name) ?? row(q));
      if (next.length === 0) {
        next.push(el("tr", { class: "empty" }, el("td", { colspan: "6" }, "No queues on the server yet (a queue appears with its first job).")));
      }
      tbody.replaceChildren(...next);
      restoreFocus(tbody, focus, $("queues-title"));
      const added = queues.filter((q) => !before.has(q.name)).map((q) => shown(q.name));
      const gone = [...before].filter((n) => !queues.some((q) => q.name === n)).map(shown);
      if (rows.length > 0 && (added.length > 0 || gone.length > 0)) {
        announce([added.length ? `New: ${added.join(", ")}.` : "", gone.length ? `Gone: ${gone.join(", ")}.` : ""].join(" ").trim());
      }
    }
    queues.forEach((q, i) => fill(tbody.rows[i]!, q));
  });
}

// ---------------------------------------------------------------------------------------------
// /queues/<name>

interface JobTable {
  readonly state: ListedState;
  offset: number;
  /** The JSON of the last page rendered (a page that did not change is not rendered again). */
  last: string;
  total: number;
  readonly tbody: HTMLTableSectionElement;
  readonly columns: number;
  readonly heading: HTMLElement;
  readonly prev: HTMLButtonElement;
  readonly next: HTMLButtonElement;
  readonly range: HTMLOutputElement;
}

function queuePage(): void {
  const name = body.dataset.queue ?? "";
  const limit = Math.min(100, Math.max(1, Number(body.dataset.limit) || 10));
  const pauseButton = $<HTMLButtonElement>("pause");
  const resumeButton = $<HTMLButtonElement>("resume");
  const requeueAll = $<HTMLButtonElement>("requeue-all");
  const state = $<HTMLOutputElement>("state");
  const spark = $("spark").querySelector("polyline")!;
  const sparkDesc = $("spark-desc");
  const missing = $("missing");
  const enc = encodeURIComponent(name);

  const tables = new Map<ListedState, JobTable>();
  for (const s of LISTED_STATES) {
    const section = $(`${s}-section`);
    const table = $<HTMLTableElement>(`jobs-${s}`);
    tables.set(s, {
      state: s,
      offset: 0,
      last: "",
      total: 0,
      tbody: table.tBodies[0]!,
      columns: table.tHead!.rows[0]!.cells.length,
      heading: $(`${s}-title`),
      prev: section.querySelector<HTMLButtonElement>('button[data-pager="prev"]')!,
      next: section.querySelector<HTMLButtonElement>('button[data-pager="next"]')!,
      range: $<HTMLOutputElement>(`${s}-range`),
    });
  }

  let paused = pauseButton.disabled;
  const showPaused = (p: boolean): void => {
    paused = p;
    pauseButton.disabled = p;
    resumeButton.disabled = !p;
    const b = state.firstElementChild as HTMLElement | null;
    if (b === null || b.dataset.paused !== String(p)) state.replaceChildren(badge(p));
  };

  const showCounts = (c: CountsView): void => {
    for (const k of ["pending", "active", "scheduled", "dead"] as const) setNumber($(`count-${k}`), c[k]);
  };

  const refreshQueue = async (): Promise<void> => {
    const q = await getJson<QueueReply>(`/api/queue?name=${enc}`);
    missing.hidden = q.exists;
    showCounts(q.counts);
    showPaused(q.paused);
    for (const [k, v] of Object.entries(q.totals)) setNumber($(`total-${k}`), v);
    spark.setAttribute("points", sparkPoints(q.rate, 320, 56));
    const summary = rateSummary(q.rate);
    if (sparkDesc.textContent !== summary) sparkDesc.textContent = summary;
    const hadFocus = document.activeElement === requeueAll;
    requeueAll.disabled = q.counts.dead === 0;
    if (hadFocus && requeueAll.disabled) tables.get("dead")!.heading.focus();
  };

  const cell = (text: string, cls?: string, attrs: Record<string, string> = {}): HTMLTableCellElement =>
    el("td", { ...(cls ? { class: cls } : {}), ...attrs }, text);

  const jobRow = (t: JobTable, j: JobRow, i: number): HTMLTableRowElement => {
    const tr = el("tr", { "data-id": j.id });
    const id = el("th", { scope: "row" }, el("code", {}, j.id));
    const payload = cell(j.payload, "payload", j.payloadError ? { "data-error": "true" } : {});
    const attempts = cell(String(j.attempts), "num");
    if (t.state === "pending") {
      tr.append(cell(String(t.offset + i + 1), "num"), id, attempts, el("td", {}, timeEl(j.createdAt)), payload);
    } else if (t.state === "scheduled") {
      tr.append(id, el("td", {}, timeEl(j.dueAt)), attempts, cell(j.reason === undefined ? "—" : shown(j.reason), "reason"), payload);
    } else {
      const button = el("button", { type: "button", "aria-label": `Requeue ${j.id}`, "data-key": `requeue:${j.id}` }, "Requeue");
      button.addEventListener("click", () => void requeue([j.id]));
      tr.append(id, el("td", {}, timeEl(j.buriedAt)), attempts, cell(j.reason === undefined ? "—" : shown(j.reason), "reason"), payload, el("td", {}, button));
    }
    return tr;
  };

  const refreshJobs = async (t: JobTable): Promise<void> => {
    let page = await getJson<JobsReply>(`/api/jobs?name=${enc}&state=${t.state}&offset=${t.offset}&limit=${limit}`);
    if (page.jobs.length === 0 && t.offset > 0) {
      // The jobs moved on under this page: go to the last page there is.
      t.offset = page.total === 0 ? 0 : Math.floor((page.total - 1) / limit) * limit;
      page = await getJson<JobsReply>(`/api/jobs?name=${enc}&state=${t.state}&offset=${t.offset}&limit=${limit}`);
    }
    t.total = page.total;
    const first = page.jobs.length === 0 ? 0 : t.offset + 1;
    const range = page.jobs.length === 0
      ? (page.total === 0 ? "none" : `none here, ${page.total} in all`)
      : `${first}–${t.offset + page.jobs.length} of ${Math.max(page.total, t.offset + page.jobs.length)}`;
    if (t.range.textContent !== range) t.range.textContent = range;
    t.prev.disabled = t.offset === 0;
    t.next.disabled = t.offset + limit >= page.total;
    const text = JSON.stringify([t.offset, page.jobs]);
    if (text === t.last) return;
    t.last = text;
    const focus = focusedKey(t.tbody);
    const rows = page.jobs.map((j, i) => jobRow(t, j, i));
    if (rows.length === 0) {
      rows.push(el("tr", { class: "empty" }, el("td", { colspan: String(t.columns) }, `No ${t.state} jobs.`)));
    }
    t.tbody.replaceChildren(...rows);
    restoreFocus(t.tbody, focus, t.state === "dead" && page.total > 0 ? requeueAll : t.heading);
  };

  const refreshAll = async (): Promise<void> => {
    await Promise.all([refreshQueue(), ...[...tables.values()].map(refreshJobs)]);
  };

  /**
   * Runs an action once at a time (a click meanwhile is ignored; the buttons stay enabled, so
   * focus stays where it is), announces its result, then refreshes everything.
   */
  let busy = false;
  const act = async (run: () => Promise<string>): Promise<void> => {
    if (busy) return;
    busy = true;
    body.setAttribute("aria-busy", "true");
    try {
      announce(await run());
    } catch (e) {
      announce(`Failed: ${message(e)}`, "error");
    }
    await refreshAll().catch((e) => announce(`Cannot refresh: ${message(e)}`, "error"));
    body.removeAttribute("aria-busy");
    busy = false;
  };

  const requeue = (ids: string[]): Promise<void> =>
    act(async () => {
      const r = await postJson<RequeueReply>("/api/requeue", { name, ids });
      return r.moved === 1 ? `Requeued ${ids[0]}: it is pending again.` : `${ids[0]} was not requeued (no longer dead).`;
    });

  requeueAll.addEventListener("click", () =>
    void act(async () => {
      const r = await postJson<RequeueReply>("/api/requeue", { name });
      return `Requeued ${r.moved} dead job${r.moved === 1 ? "" : "s"}: pending again.`;
    }).then(() => {
      if (requeueAll.disabled && document.activeElement === document.body) tables.get("dead")!.heading.focus();
    }));

  const setPaused = (verb: "pause" | "resume"): void =>
    void act(async () => {
      const r = await postJson<PauseReply>(`/api/${verb}`, { name });
      showPaused(r.paused);
      return r.paused ? "Paused: workers claim nothing from this queue until it is resumed." : "Resumed: workers claim again.";
    }).then(() => (paused ? resumeButton : pauseButton).focus());
  pauseButton.addEventListener("click", () => setPaused("pause"));
  resumeButton.addEventListener("click", () => setPaused("resume"));

  for (const t of tables.values()) {
    const move = (delta: number): void => {
      t.offset = Math.max(0, t.offset + delta * limit);
      void refreshJobs(t).then(() => {
        // A pager button that just became disabled loses focus: hand it to the other one.
        if (document.activeElement === document.body || (document.activeElement as HTMLButtonElement | null)?.disabled) {
          (t.next.disabled ? t.prev : t.next).focus();
        }
      }, (e) => announce(`Cannot refresh: ${message(e)}`, "error"));
    };
    t.prev.addEventListener("click", () => move(-1));
    t.next.addEventListener("click", () => move(1));
  }

  poll(refreshAll);
}

if (body.dataset.page === "queues") queuesPage();
else if (body.dataset.page === "queue") queuePage();
