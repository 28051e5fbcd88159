/**
 * The actions on a selection of one table's jobs (a queue page's dead or scheduled jobs): a
 * checkbox in each row's header and one in the Job column's header for the page's rows, and the
 * table's buttons (`data-bulk`: run now, requeue, delete), enabled while a job is selected. Each
 * action is one POST naming the selected ids — one verb call on the server: all of them or none (a
 * job that moved meanwhile refuses the whole call, and the selection stays for another try). The
 * selection is kept across re-renders, and only for the rows a page shows.
 *
 * @module
 */
import type { ListedState, RemoveManyReply, RequeueReply, RunReply } from "../json_api.ts";
import type { Act } from "./actions.ts";
import { el } from "./dom.ts";
import { postJson } from "./fetch_json.ts";

/** One table's selection, as its rows use it. */
export interface Selection {
  /** A row's checkbox for job `id`, checked when it is selected. */
  box(id: string): HTMLInputElement;
  /** After a render: keeps only the ids shown, and updates the page box and the buttons. */
  shown(ids: readonly string[]): void;
}

/** What each action posts, and what it says once done. */
const ACTIONS = {
  run: async (name: string, ids: string[]): Promise<string> => {
    const r = await postJson<RunReply>("api/run", { name, ids });
    return `Ran ${r.moved} scheduled job${r.moved === 1 ? "" : "s"} now: pending.`;
  },
  requeue: async (name: string, ids: string[]): Promise<string> => {
    const r = await postJson<RequeueReply>("api/requeue", { name, ids });
    return `Requeued ${r.moved} dead job${r.moved === 1 ? "" : "s"}: pending again.`;
  },
  remove: async (name: string, ids: string[]): Promise<string> => {
    const r = await postJson<RemoveManyReply>("api/remove-many", { name, ids });
    return `Deleted ${r.removed} job${r.removed === 1 ? "" : "s"}.`;
  },
} as const;

/** Wires the selection of queue `name`'s `state` table (its boxes and buttons, as queue_html.ts renders them) to `act`. */
export function selectionControls(name: string, state: ListedState, act: Act): Selection {
  const selected = new Set<string>();
  let visible: readonly string[] = [];
  const section = document.getElementById(`${state}-section`)!;
  const all = section.querySelector<HTMLInputElement>("input[data-select-all]")!;
  const buttons = Array.from(section.querySelectorAll<HTMLButtonElement>("button[data-bulk]"));
  const boxes = (): HTMLInputElement[] => Array.from(section.querySelectorAll<HTMLInputElement>("tbody input.select"));

  const update = (): void => {
    for (const b of buttons) b.disabled = selected.size === 0;
    const picked = visible.filter((id) => selected.has(id)).length;
    all.checked = visible.length > 0 && picked === visible.length;
    all.indeterminate = picked > 0 && picked < visible.length;
  };

  all.addEventListener("change", () => {
    for (const box of boxes()) {
      box.checked = all.checked;
      const id = box.dataset.id!;
      if (all.checked) selected.add(id);
      else selected.delete(id);
    }
    update();
  });
  for (const b of buttons) {
    const run = ACTIONS[b.dataset.bulk as keyof typeof ACTIONS];
    b.addEventListener("click", () =>
      void act(async () => {
        const said = await run(name, [...selected]);
        selected.clear();
        for (const box of boxes()) box.checked = false;
        update();
        return said;
      }));
  }

  return {
    box: (id) => {
      const box = el("input", { type: "checkbox", class: "select", "data-id": id, "data-key": `select:${id}`, "aria-label": `Select ${id}` });
      box.checked = selected.has(id);
      box.addEventListener("change", () => {
        if (box.checked) selected.add(id);
        else selected.delete(id);
        update();
      });
      return box;
    },
    shown: (ids) => {
      visible = ids;
      for (const id of [...selected]) if (!ids.includes(id)) selected.delete(id);
      update();
    },
  };
}
