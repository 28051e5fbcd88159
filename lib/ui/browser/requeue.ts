/**
 * Requeueing a queue's dead jobs: one (the Requeue button of its row) or all ("Requeue all",
 * enabled while there are dead jobs). When "Requeue all" is disabled under the focus, focus moves
 * to the dead table's heading.
 *
 * @module
 */
import type { RequeueReply } from "../json_api.ts";
import type { Act } from "./actions.ts";
import { $ } from "./dom.ts";
import { postJson } from "./fetch_json.ts";

/** What the rest of the page uses of the requeue actions. */
export interface Requeue {
  /** The "Requeue all" button. */
  readonly allButton: HTMLButtonElement;
  /** Requeues the dead job `id`. */
  one(id: string): void;
  /** Enables "Requeue all" while the queue has `dead` jobs. */
  showDead(dead: number): void;
}

/** Wires "Requeue all" of queue `name`'s page to `act`, and requeues single jobs through it. */
export function requeueControls(name: string, act: Act): Requeue {
  const all = $<HTMLButtonElement>("requeue-all");
  const deadHeading = $("dead-title");
  all.addEventListener("click", () =>
    void act(async () => {
      const r = await postJson<RequeueReply>("api/requeue", { name });
      return `Requeued ${r.moved} dead job${r.moved === 1 ? "" : "s"}: pending again.`;
    }).then(() => {
      if (all.disabled && document.activeElement === document.body) deadHeading.focus();
    }));
  return {
    allButton: all,
    one: (id) =>
      void act(async () => {
        const r = await postJson<RequeueReply>("api/requeue", { name, ids: [id] });
        return r.moved === 1 ? `Requeued ${id}: it is pending again.` : `${id} was not requeued (no longer dead).`;
      }),
    showDead: (dead) => {
      const hadFocus = document.activeElement === all;
      all.disabled = dead === 0;
      if (hadFocus && all.disabled) deadHeading.focus();
    },
  };
}
