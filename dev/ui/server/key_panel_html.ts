/**
 * The key panel's page (`GET /keys`): plain HTML and CSS, no framework. Its script is `/panel.js`
 * (browser/key_panel.ts, bundled), which runs the host half (`mod.ts`) and loads the native half
 * (`/keyspace.wasm`).
 *
 * @module
 */
import { PANEL_TYPES, PRESETS, SAMPLE_JOB_ID } from "../shared/verdicts.ts";
import { htmlDocument } from "../../../lib/ui/document_html.ts";
import { esc } from "../../../lib/ui/responses.ts";
import { STYLE } from "../../../lib/ui/style.ts";

/** The key panel's page (`GET /keys`). */
export function panelHtml(withDashboard = false): string {
  const options = PANEL_TYPES.map((t) => `<option value="${t}">${t === "job" ? "job (a row)" : t}</option>`).join("");
  const presets = PRESETS.map((p) => `<button type="button" data-preset="${esc(p.label)}">${esc(p.label)}</button>`).join(" ");
  return htmlDocument(
    { title: "emq ui — key panel", style: STYLE, script: "/panel.js" },
    `<body>
<header>
<h1>EchoMQ</h1>
<p>emq ui${withDashboard ? ' · <a href="/">Dashboard</a>' : ""}</p>
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
</body>`,
  );
}
