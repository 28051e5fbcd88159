/**
 * The pages' style sheets: plain CSS, light and dark. The key panel's ({@link STYLE}) is where the
 * dashboard's pages start ({@link DASHBOARD_STYLE} adds their tables, counts and controls).
 *
 * @module
 */

/** The key panel's style sheet (the dashboard's pages start from it too). */
export const STYLE = `
:root {
  color-scheme: light dark;
  --bg: #f6f7f9; --card: #fff; --ink: #16181d; --muted: #5b6270; --line: #d9dde4;
  --accent: #1f5fbf; --ok: #17663a; --ok-bg: #e6f4ea; --no: #a3261b; --no-bg: #fbe9e7;
  --mark: #ffe58a; --note-bg: #eef3fb; --mono: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #121418; --card: #1b1e24; --ink: #e8eaee; --muted: #a2a9b6; --line: #313640;
    --accent: #8ab4f8; --ok: #7fd69a; --ok-bg: #16301f; --no: #ff9b8f; --no-bg: #3a1b18;
    --mark: #6b5a10; --note-bg: #1d2636;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", "Liberation Sans", sans-serif; }
header { padding: 1.25rem 2rem .5rem; }
header h1 { margin: 0; font-size: 1.35rem; letter-spacing: .01em; }
header p { margin: .15rem 0 0; color: var(--muted); }
main { padding: .5rem 2rem 2rem; max-width: 62rem; }
.panel { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 1.25rem 1.5rem; }
.panel h2 { margin: 0 0 .25rem; font-size: 1.1rem; }
.lede { margin: 0 0 1rem; color: var(--muted); font-size: .93rem; }
code, input, select, output { font-family: var(--mono); }
form { display: flex; flex-wrap: wrap; gap: .75rem 1.25rem; align-items: end; margin-bottom: 1.25rem; }
.field { display: flex; flex-direction: column; gap: .25rem; }
.field label, .presets-label { font-size: .85rem; font-weight: 600; color: var(--muted); }
input, select { font-size: 1rem; padding: .45rem .6rem; border: 1px solid var(--line); border-radius: 6px;
  background: var(--bg); color: var(--ink); min-width: 9rem; }
#queue { min-width: 16rem; }
#job-id { min-width: 12rem; }
.presets { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.presets-label { margin-right: .25rem; }
button { font: inherit; font-size: .93rem; padding: .4rem .8rem; border-radius: 6px; cursor: pointer;
  border: 1px solid var(--accent); background: transparent; color: var(--accent); }
button:hover { background: var(--note-bg); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.outputs { display: grid; grid-template-columns: max-content 1fr; gap: .55rem 1.25rem; margin: 0; }
.outputs > label { font-weight: 600; color: var(--muted); padding-top: .1rem; }
.outputs output { display: block; min-height: 1.5em; overflow-wrap: anywhere; }
.outputs small { display: block; color: var(--muted); font-family: var(--mono); font-size: .8rem; overflow-wrap: anywhere; }
#out-key code { font-size: 1.05rem; }
mark { background: var(--mark); color: inherit; border-radius: 3px; padding: 0 .1em; }
.esc { color: var(--accent); font-weight: 600; }
output[data-verdict] { font-family: system-ui, sans-serif; }
output[data-verdict]::before { font-weight: 700; margin-right: .4em; }
output[data-verdict="accepted"] { color: var(--ok); }
output[data-verdict="accepted"]::before { content: "✓"; }
output[data-verdict="refused"] { color: var(--no); }
output[data-verdict="refused"]::before { content: "✗"; }
.note { margin: 1.1rem 0 0; padding: .6rem .85rem; border-radius: 6px; background: var(--note-bg); font-size: .93rem; }
.warning { margin: 1.1rem 0 0; padding: .7rem .9rem; border-radius: 6px; font-weight: 600;
  color: var(--no); background: var(--no-bg); border: 2px solid var(--no); }
[hidden] { display: none !important; }
`;

/** What the dashboard's pages add to {@link STYLE}. */
export const DASHBOARD_STYLE = `
main { max-width: 76rem; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: .35rem 1.5rem; }
header nav { display: flex; gap: 1rem; }
header nav a { color: var(--accent); text-decoration: none; padding: .15rem .1rem; border-bottom: 2px solid transparent; }
header nav a[aria-current="page"] { color: var(--ink); border-bottom-color: var(--accent); font-weight: 600; }
header nav a:hover { text-decoration: underline; }
.skip { position: absolute; left: -999px; top: .5rem; background: var(--card); padding: .4rem .7rem; border-radius: 6px; }
.skip:focus { left: .5rem; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.panel + .panel { margin-top: 1.25rem; }
.crumbs { margin: 0 0 .6rem; color: var(--muted); font-size: .93rem; }
.crumbs a { color: var(--accent); }
.qname { font-family: var(--mono); font-size: 1.05em; overflow-wrap: anywhere; }
.kind { color: var(--muted); font-weight: 500; }
table { border-collapse: collapse; width: 100%; font-size: .93rem; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); font-weight: 600; }
tbody th { font-weight: 500; }
tbody tr:hover { background: var(--bg); }
.num { text-align: right; font-variant-numeric: tabular-nums; font-family: var(--mono); }
td.num[data-nonzero="true"][data-col="dead"] { color: var(--no); font-weight: 700; }
a { color: var(--accent); }
.badge { display: inline-block; font-size: .8rem; font-weight: 600; padding: .05rem .5rem; border-radius: 999px;
  border: 1px solid var(--line); color: var(--muted); }
.badge[data-paused="true"] { color: var(--no); border-color: var(--no); background: var(--no-bg); }
.badge[data-paused="false"] { color: var(--ok); border-color: var(--ok); background: var(--ok-bg); }
.summary { display: flex; flex-wrap: wrap; gap: 1rem 2rem; align-items: center; justify-content: space-between; margin: .5rem 0 1rem; }
.counts { display: grid; grid-template-columns: repeat(4, minmax(6.5rem, 1fr)); gap: .75rem; margin: 0; }
.counts > div { border: 1px solid var(--line); border-radius: 8px; padding: .5rem .8rem; background: var(--bg); }
.counts dt { font-size: .8rem; color: var(--muted); font-weight: 600; text-transform: uppercase; letter-spacing: .04em; }
.counts dd { margin: 0; font: 600 1.5rem/1.3 var(--mono); font-variant-numeric: tabular-nums; }
.counts dd[data-nonzero="true"]#count-dead { color: var(--no); }
.controls { display: flex; gap: .6rem; align-items: center; }
.controls .label { font-size: .85rem; font-weight: 600; color: var(--muted); }
button:disabled { opacity: .45; cursor: default; border-color: var(--line); color: var(--muted); background: transparent; }
button.danger { border-color: var(--no); color: var(--no); }
.throughput { display: flex; flex-wrap: wrap; gap: 1rem 2rem; align-items: center; margin: 0; }
.throughput figure { margin: 0; }
.throughput figcaption { font-size: .85rem; font-weight: 600; color: var(--muted); }
#spark { width: 320px; height: 56px; display: block; border-bottom: 1px solid var(--line); }
#spark polyline { fill: none; stroke: var(--accent); stroke-width: 2; stroke-linejoin: round; }
#spark polyline.failed { stroke: var(--no); stroke-dasharray: 4 3; }
.legend { font-size: .75rem; color: var(--muted); padding-left: 3.2rem; }
.legend .acked::before, .legend .failed::before { content: ""; display: inline-block; width: 1rem; height: 0; margin-right: .3rem; vertical-align: middle; border-top: 2px solid var(--accent); }
.legend .failed::before { border-top: 2px dashed var(--no); }
#spark-desc { margin: .2rem 0 0; font-size: .85rem; color: var(--muted); }
.spark-axes { position: relative; padding-left: 3.2rem; }
.axis { font-size: .75rem; color: var(--muted); font-variant-numeric: tabular-nums; }
.axis.y { position: absolute; left: 0; top: 0; }
.axis.y0 { position: absolute; left: 0; bottom: 0; }
.axis.x { display: flex; justify-content: space-between; padding-left: 3.2rem; width: calc(320px + 3.2rem); }
#minutes { width: 360px; height: 64px; display: block; border-bottom: 1px solid var(--line); }
#minutes rect.processed { fill: var(--accent); }
#minutes rect.failed { fill: var(--no); }
.axis.x.minutes-x { width: calc(360px + 3.2rem); }
#minutes-desc { margin: .2rem 0 0; font-size: .85rem; color: var(--muted); }
.limit-form { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin: .5rem 0 0; font-size: .93rem; }
.limit-form fieldset { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; border: 1px solid var(--line); border-radius: 6px; margin: 0; padding: .3rem .6rem .5rem; }
.limit-form legend { font-size: .85rem; font-weight: 600; color: var(--muted); }
.limit-form input { min-width: 0; width: 6rem; }
.limit-form select { min-width: 0; width: auto; }
.limit-form .hint { flex-basis: 100%; margin: 0; font-size: .8rem; color: var(--muted); }
.search { display: flex; gap: .5rem; align-items: center; margin: .5rem 0 1rem; }
.job dl { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 24rem), 1fr)); gap: .3rem 1.2rem; margin: 0; }
.job dl > div { display: flex; gap: .6rem; min-width: 0; }
.job dt { color: var(--muted); flex: none; }
.job dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
.job pre { font-family: var(--mono); white-space: pre-wrap; overflow-wrap: anywhere; background: var(--bg); padding: .6rem .8rem; border-radius: 6px; margin: .3rem 0 1rem; }
.job details.failure { margin: .2rem 0; }
.job details.failure summary { cursor: pointer; overflow-wrap: anywhere; }
.job details.failure pre { margin: .3rem 0 .6rem; font-size: .85rem; }
.totals { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; margin: 0; font-size: .93rem; }
.totals div { display: flex; gap: .4rem; }
.totals dt { color: var(--muted); }
.totals dd { margin: 0; font-family: var(--mono); font-variant-numeric: tabular-nums; }
.bar { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; margin-bottom: .5rem; }
.bar h2 { margin: 0; }
.pager { display: flex; gap: .75rem; align-items: center; justify-content: flex-end; margin-top: .6rem; font-size: .93rem; }
.pager output { color: var(--muted); font-variant-numeric: tabular-nums; min-width: 9rem; text-align: center; }
.payload, .reason { font-family: var(--mono); font-size: .85rem; overflow-wrap: anywhere; }
.reason { color: var(--no); }
.jobname { font-weight: 400; color: var(--muted); overflow-wrap: anywhere; }
.payload[data-error="true"] { color: var(--no); font-style: italic; }
tbody th code { white-space: nowrap; }
.empty td { color: var(--muted); font-style: italic; }
.status:empty { display: none; }
.status { margin: 1rem 0 0; padding: .55rem .85rem; border-radius: 6px; background: var(--note-bg); font-size: .93rem; }
.status[data-kind="error"] { color: var(--no); background: var(--no-bg); }
.updated { color: var(--muted); font-size: .85rem; }
`;
