/**
 * A queue page's per-minute chart (`#minutes`, lib/ui/queue_html.ts): processed and failed bars for
 * each minute of the last hour (`QueueReply.minutes`), the axes' labels (per minute on y, UTC on x)
 * and the chart in words (`#minutes-desc`, which is also its empty state: "No traffic in the last
 * hour"). Drawn again only when what it shows changed.
 *
 * @module
 */
import type { MinutesView } from "../json_api.ts";
import { minuteAxes, minuteBars, minuteLabel, minuteSummary } from "../minute_chart.ts";
import { $ } from "./dom.ts";

const SVG = "http://www.w3.org/2000/svg";

/** The page's per-minute chart; the function it returns draws a view. */
export function minutesChart(): (view: MinutesView) => void {
  const svg = $("minutes");
  const labels = { top: $("minutes-peak"), start: $("minutes-start"), middle: $("minutes-middle"), end: $("minutes-end") };
  const desc = $("minutes-desc");
  let last = "";
  return (view) => {
    const bars = minuteBars(view, 360, 64);
    const axes = minuteAxes(view);
    const summary = minuteSummary(view);
    const shown = JSON.stringify([bars, axes, summary]);
    if (shown === last) return;
    last = shown;
    svg.replaceChildren(...bars.map((b) => {
      const rect = document.createElementNS(SVG, "rect");
      rect.setAttribute("class", b.kind);
      for (const [k, v] of [["x", b.x], ["y", b.y], ["width", b.width], ["height", b.height]] as const) rect.setAttribute(k, v.toFixed(1));
      const title = document.createElementNS(SVG, "title");
      title.textContent = `${minuteLabel(b.t)}: ${b.count} ${b.kind}`;
      rect.append(title);
      return rect;
    }));
    for (const k of ["top", "start", "middle", "end"] as const) if (labels[k].textContent !== axes[k]) labels[k].textContent = axes[k];
    if (desc.textContent !== summary) desc.textContent = summary;
    svg.closest("figure")!.dataset.empty = String(bars.length === 0);
  };
}
