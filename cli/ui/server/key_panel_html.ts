/**
 * The key panel's page (`GET /`): plain HTML and CSS, no framework. Its script is `/panel.js`
 * (bundle.ts), which runs the host half (`mod.ts`) and loads the native half (`/keyspace.wasm`).
 *
 * @module
 */
import type { Route } from "./server.ts";
import { PANEL_TYPES, PRESETS, SAMPLE_JOB_ID } from "./page/verdicts.ts";

/** Escapes text for HTML content and attribute values. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

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

/** The page's HTML. */
export function panelHtml(): string {
  const options = PANEL_TYPES.map((t) => `<option value="${t}">${t === "job" ? "job (a row)" : t}</option>`).join("");
  const presets = PRESETS.map((p) => `<button type="button" data-preset="${esc(p.label)}">${esc(p.label)}</button>`).join(" ");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>emq ui — key panel</title>
<style>${STYLE}</style>
<script type="module" src="/panel.js"></script>
</head>
<body>
<header>
<h1>EchoMQ</h1>
<p>emq ui</p>
</header>
<main>
<section class="panel" aria-labelledby="panel-title">
<h2 id="panel-title">Key panel</h2>
<p class="lede">Compose a key <code>emq:{queue}:type</code>. The host verdict is <code>mod.ts</code> running in
this page; the native verdict is the module's own Rust keyspace (<code>native/src/keyspace.rs</code>)
compiled to WebAssembly.</p>
<form id="compose" autocomplete="off">
<div class="field"><label for="queue">Queue</label>
<input id="queue" name="queue" type="text" value="orders" spellcheck="false" autocapitalize="off"></div>
<div class="field"><label for="type">Type</label>
<select id="type" name="type">${options}</select></div>
<div class="field" id="id-field" hidden><label for="job-id">Job id</label>
<input id="job-id" name="job-id" type="text" value="${SAMPLE_JOB_ID}" spellcheck="false" autocapitalize="off"></div>
<div class="presets" role="group" aria-labelledby="presets-label">
<span class="presets-label" id="presets-label">Presets</span> ${presets}
</div>
</form>
<div class="outputs">
<label for="out-key">Key</label>
<output id="out-key" for="queue type job-id" aria-live="polite">…</output>
<label for="out-hashtag">Hashtag</label>
<output id="out-hashtag" for="queue" aria-live="polite">…</output>
<label for="out-slot">Slot</label>
<output id="out-slot" for="queue type job-id" aria-live="polite">…</output>
<label for="out-host">Host verdict</label>
<output id="out-host" for="queue type job-id" aria-live="polite">…</output>
<label for="out-native">Native verdict</label>
<div><output id="out-native" for="queue type job-id" aria-live="polite">loading the module's keyspace (WebAssembly)…</output>
<small id="native-split"></small></div>
</div>
<p id="note" class="note" hidden></p>
<p id="warning" class="warning" role="alert" hidden></p>
</section>
</main>
</body>
</html>
`;
}

/** `GET /`: the key panel. */
export function pageRoute(html: string = panelHtml()): Route {
  return {
    path: "/",
    handle: () => new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } }),
  };
}
