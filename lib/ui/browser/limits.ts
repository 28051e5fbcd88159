/**
 * A queue page's Limits: the line (`#limits-text`) redrawn from each poll's `limits` (a park's end
 * counts down: "parked until … (in 20 s)"), and the form that sets them through `POST api/limit`.
 * An empty field is left out of the request, so it keeps its limit (`mq.limit`'s rule); the
 * form starts over once its limits are in force, and keeps what was typed when they are refused.
 * The Remove buttons send `null` and are enabled only while their limit is set. The line is not
 * a live region: a park's countdown would be read out every poll; actions are announced in the
 * page's status line. Values go to the
 * server as typed numbers: the client checks them there, and its message is what the page
 * announces (one rule, one text).
 *
 * @module
 */
import type { QueueLimits } from "../../client/mod.ts";
import type { LimitReply } from "../json_api.ts";
import { limitsText } from "../limits_text.ts";
import type { Act } from "./actions.ts";
import { $ } from "./dom.ts";
import { postJson } from "./fetch_json.ts";

/** A number field's value: left out when empty, else the number typed (NaN for what is not one, which the server refuses). */
function field(id: string): number | undefined {
  const text = $<HTMLInputElement>(id).value.trim();
  return text === "" ? undefined : Number(text);
}

/** What the form asks for, or null when every field is empty. */
function requested(): { concurrency?: number; rate?: { max: number; perMs: number; burst?: number } } | null {
  const concurrency = field("limit-concurrency");
  const max = field("limit-rate-max");
  const per = field("limit-rate-per") ?? 1;
  const unit = Number($<HTMLSelectElement>("limit-rate-unit").value);
  const burst = field("limit-rate-burst");
  if (concurrency === undefined && max === undefined) return null;
  return {
    ...(concurrency === undefined ? {} : { concurrency }),
    ...(max === undefined ? {} : { rate: { max, perMs: per * unit, ...(burst === undefined ? {} : { burst }) } }),
  };
}

/** Wires queue `name`'s Limits form to `act`; the function it returns shows the limits in force. */
export function limitsControl(name: string, act: Act): (limits: QueueLimits) => void {
  const text = $("limits-text");
  const form = $<HTMLFormElement>("limit-form");
  const removeConcurrency = $<HTMLButtonElement>("limit-concurrency-remove");
  const removeRate = $<HTMLButtonElement>("limit-rate-remove");
  const show = (l: QueueLimits): void => {
    const words = limitsText(l, Date.now());
    if (text.textContent !== words) text.textContent = words;
    removeConcurrency.disabled = l.concurrency === null;
    removeRate.disabled = l.rate === null;
  };
  /** Sends `payload`; `after` runs once it is in force (a refusal keeps the fields as typed, to fix). */
  const send = (payload: object, done: string, after: () => void): Promise<void> =>
    act(async () => {
      const r = await postJson<LimitReply>("api/limit", { name, ...payload });
      show(r.limits);
      after();
      return `${done} Limits: ${limitsText(r.limits, Date.now())}.`;
    });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const wanted = requested();
    if (wanted === null) {
      void act(() => Promise.reject(new Error("fill in a concurrency or a rate (claims per period) to set")));
      return;
    }
    void send(wanted, "Limits set.", () => form.reset());
  });
  // a Remove button is disabled once its limit is gone: the focus goes to that limit's first field
  const remove = (button: HTMLButtonElement, payload: object, done: string, field: string): void =>
    void send(payload, done, () => {}).then(() => {
      if (button.disabled && (document.activeElement === button || document.activeElement === document.body)) $(field).focus();
    });
  removeConcurrency.addEventListener("click", () => remove(removeConcurrency, { concurrency: null }, "Concurrency limit removed.", "limit-concurrency"));
  removeRate.addEventListener("click", () => remove(removeRate, { rate: null }, "Rate limit removed.", "limit-rate-max"));
  return show;
}
