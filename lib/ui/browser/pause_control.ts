/**
 * A queue page's Claims group: the paused / running badge (`#state`) and the Pause and Resume
 * buttons, only the one that changes the state enabled. After a click, focus goes to the button
 * now enabled.
 *
 * @module
 */
import type { PauseReply } from "../json_api.ts";
import type { Act } from "./actions.ts";
import { showBadge } from "./badge.ts";
import { $ } from "./dom.ts";
import { postJson } from "./fetch_json.ts";

/** Wires the buttons of queue `name`'s page to `act`; the function it returns shows a state. */
export function pauseControl(name: string, act: Act): (paused: boolean) => void {
  const pauseButton = $<HTMLButtonElement>("pause");
  const resumeButton = $<HTMLButtonElement>("resume");
  const state = $<HTMLOutputElement>("state");
  let paused = pauseButton.disabled;
  const show = (p: boolean): void => {
    paused = p;
    pauseButton.disabled = p;
    resumeButton.disabled = !p;
    showBadge(state, p);
  };
  const set = (verb: "pause" | "resume"): void =>
    void act(async () => {
      const r = await postJson<PauseReply>(`api/${verb}`, { name });
      show(r.paused);
      return r.paused ? "Paused: workers claim nothing from this queue until it is resumed." : "Resumed: workers claim again.";
    }).then(() => (paused ? resumeButton : pauseButton).focus());
  pauseButton.addEventListener("click", () => set("pause"));
  resumeButton.addEventListener("click", () => set("resume"));
  return show;
}
