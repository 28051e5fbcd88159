/**
 * A queue page's Limits: the line that says them (`#limits`, kept live by the page's script) and a
 * form that sets them through `POST api/limit` — the concurrency limit, the rate limit (claims per
 * period, burst), each with a Remove button (`null`). A field left empty keeps its limit, as
 * `mq.limit` does with a field left out, so setting one limit never clears the other. A read-only
 * dashboard hides the form (frame_html.ts) and the server refuses the POST anyway.
 *
 * @module
 */
import type { QueueLimits } from "../client/mod.ts";
import { esc } from "./responses.ts";
import { limitsText } from "./limits_text.ts";

/** The units the rate's period is given in, ms each (the first is the default). */
export const PERIOD_UNITS: ReadonlyArray<readonly [label: string, ms: number]> = [["s", 1000], ["min", 60_000], ["h", 3_600_000], ["ms", 1]];

/** The Limits line and form, the line as `limits` are now. */
export function limitsHtml(limits: QueueLimits): string {
  const units = PERIOD_UNITS.map(([label, ms]) => `<option value="${ms}">${label}</option>`).join("");
  const number = (id: string, min: number) => `<input id="${id}" type="number" min="${min}" step="1" inputmode="numeric" size="6">`;
  return `<div class="limits" role="group" aria-labelledby="limits-label">
<p class="note" id="limits"><span id="limits-label">Limits</span>: <span id="limits-text">${esc(limitsText(limits))}</span></p>
<form id="limit-form" class="limit-form" aria-label="Set limits" novalidate>
<fieldset><legend>Concurrency</legend>
<label for="limit-concurrency">At most active at once</label> ${number("limit-concurrency", 1)}
<button type="button" id="limit-concurrency-remove"${limits.concurrency === null ? " disabled" : ""}>Remove concurrency limit</button>
</fieldset>
<fieldset><legend>Rate</legend>
<label for="limit-rate-max">Max claims</label> ${number("limit-rate-max", 1)}
<label for="limit-rate-per">per</label> ${number("limit-rate-per", 1)}
<label for="limit-rate-unit" class="sr-only">Period unit</label> <select id="limit-rate-unit">${units}</select>
<label for="limit-rate-burst">Burst</label> ${number("limit-rate-burst", 1)}
<button type="button" id="limit-rate-remove"${limits.rate === null ? " disabled" : ""}>Remove rate limit</button>
</fieldset>
<button type="submit" id="limit-set">Set limits</button>
<p class="hint">An empty field keeps its limit; per defaults to 1, burst to 1.</p>
</form>
</div>`;
}
