/**
 * A table the poll keeps live (lib/ui/queue_html.ts renders it saying `Loading…`): its body is
 * rendered again only when what it shows changed — so a screen reader hears only changes, and
 * focus and selection stay — with one row saying why when there is nothing to show, and focus kept
 * across a render (focus.ts).
 *
 * @module
 */
import { el } from "./dom.ts";
import { focusedKey, restoreFocus } from "./focus.ts";

/** One live table. */
export interface LiveTable {
  /** Whether `shown` (what the table would show now, as text) differs from what it last showed; it is kept as the last. */
  changed(shown: string): boolean;
  /**
   * Puts `rows` in the body (none: one row saying `empty` across every column); the focused
   * element's key focused again, else `fallback`.
   */
  fill(rows: HTMLTableRowElement[], empty: string, fallback: HTMLElement): void;
}

/** Makes `table` a {@link LiveTable}. */
export function liveTable(table: HTMLTableElement): LiveTable {
  const tbody = table.tBodies[0]!;
  const columns = table.tHead!.rows[0]!.cells.length;
  let last = "";
  return {
    changed(shown) {
      if (shown === last) return false;
      last = shown;
      return true;
    },
    fill(rows, empty, fallback) {
      const focus = focusedKey(tbody);
      if (rows.length === 0) rows.push(el("tr", { class: "empty" }, el("td", { colspan: String(columns) }, empty)));
      tbody.replaceChildren(...rows);
      restoreFocus(tbody, focus, fallback);
    },
  };
}
