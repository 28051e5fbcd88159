/**
 * A queue page's job tables, one per listed state (`#jobs-<state>` in `#<state>-section`): a page
 * of `limit` jobs at a time with Previous and Next, the range shown in words. A page that did not
 * change is not rendered again (so focus and selection stay); when its jobs moved on under it, the
 * table goes to the last page there is. A table with a selection (dead, scheduled) keeps it for
 * the rows it shows.
 *
 * @module
 */
import { type JobsReply, LISTED_STATES, type ListedState } from "../json_api.ts";
import { $ } from "./dom.ts";
import { getJson } from "./fetch_json.ts";
import { jobRowEl } from "./job_row.ts";
import { liveTable } from "./live_table.ts";
import type { Selection } from "./selection.ts";
import { cannotRefresh } from "./status.ts";

/** One state's table. */
export interface JobTable {
  /** Reads the table's page and renders it when it changed. */
  refresh(): Promise<void>;
}

/** What the tables need of the page. */
export interface JobTablesOptions {
  /** The queue. */
  readonly name: string;
  /** Jobs per page. */
  readonly limit: number;
  /** Requeues a dead job (its row's button). */
  requeue(id: string): void;
  /** Cancels an active job (its row's button). */
  cancel(id: string): void;
  /** "Requeue all": where focus goes when the dead table's focused row is gone and dead jobs remain. */
  readonly requeueAll: HTMLElement;
  /** The selections of the tables that have one. */
  readonly selections: Readonly<Partial<Record<ListedState, Selection>>>;
}

/** The tables of the page, in {@link LISTED_STATES} order. */
export function jobTables(options: JobTablesOptions): JobTable[] {
  return LISTED_STATES.map((state) => jobTable(state, options));
}

/** The words under a table: `1–10 of 42`, `none`, or `none here, 42 in all`. */
function rangeText(offset: number, shown: number, total: number): string {
  if (shown === 0) return total === 0 ? "none" : `none here, ${total} in all`;
  return `${offset + 1}–${offset + shown} of ${Math.max(total, offset + shown)}`;
}

/** The elements of `state`'s table, as server/queue_html.ts renders them. */
function tableElements(state: ListedState) {
  const section = $(`${state}-section`);
  return {
    table: liveTable($<HTMLTableElement>(`jobs-${state}`)),
    heading: $(`${state}-title`),
    prev: section.querySelector<HTMLButtonElement>('button[data-pager="prev"]')!,
    next: section.querySelector<HTMLButtonElement>('button[data-pager="next"]')!,
    range: $<HTMLOutputElement>(`${state}-range`),
  };
}

function jobTable(state: ListedState, { name, limit, requeue, cancel, requeueAll, selections }: JobTablesOptions): JobTable {
  const select = selections[state];
  const { table, heading, prev, next, range } = tableElements(state);
  let offset = 0;
  const read = (): Promise<JobsReply> => getJson<JobsReply>(`api/jobs?name=${encodeURIComponent(name)}&state=${state}&offset=${offset}&limit=${limit}`);

  const render = (page: JobsReply): void => {
    const rows = page.jobs.map((j, i) => jobRowEl(state, j, offset + i + 1, { requeue, cancel }, select));
    table.fill(rows, `No ${state} jobs.`, state === "dead" && page.total > 0 ? requeueAll : heading);
    select?.shown(page.jobs.map((j) => j.id));
  };

  const refresh = async (): Promise<void> => {
    let page = await read();
    if (page.jobs.length === 0 && offset > 0) {
      // The jobs moved on under this page: go to the last page there is.
      offset = page.total === 0 ? 0 : Math.floor((page.total - 1) / limit) * limit;
      page = await read();
    }
    const words = rangeText(offset, page.jobs.length, page.total);
    if (range.textContent !== words) range.textContent = words;
    prev.disabled = offset === 0;
    next.disabled = offset + limit >= page.total;
    if (!table.changed(JSON.stringify([offset, page.jobs]))) return;
    render(page);
  };

  const move = (delta: number): void => {
    offset = Math.max(0, offset + delta * limit);
    void refresh().then(() => {
      // A pager button that just became disabled loses focus: hand it to the other one.
      if (document.activeElement === document.body || (document.activeElement as HTMLButtonElement | null)?.disabled) {
        (next.disabled ? prev : next).focus();
      }
    }, cannotRefresh);
  };
  prev.addEventListener("click", () => move(-1));
  next.addEventListener("click", () => move(1));
  return { refresh };
}
