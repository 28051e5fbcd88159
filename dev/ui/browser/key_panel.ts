/**
 * The key panel in the browser (bundled by `bun build` into `/panel.js`): wires the form to
 * {@link report} and renders the key with its hashtag marked, the slot, and both verdicts.
 * The native half is fetched from `/keyspace.wasm` once; until then its verdict says so.
 *
 * @module
 */
import { loadNative, type NativeKeyspace } from "../shared/native.ts";
import { hashtagText, keyParts, PANEL_TYPES, type PanelType, PRESETS, report, verdictText } from "../shared/verdicts.ts";
import { type Piece, visiblePieces } from "../../../lib/ui/visible.ts";
import { $ } from "../../../lib/ui/browser/dom.ts";

const queue = $<HTMLInputElement>("queue");
const type = $<HTMLSelectElement>("type");
const idField = $<HTMLElement>("id-field");
const jobId = $<HTMLInputElement>("job-id");
const out = {
  key: $<HTMLOutputElement>("out-key"),
  hashtag: $<HTMLOutputElement>("out-hashtag"),
  slot: $<HTMLOutputElement>("out-slot"),
  host: $<HTMLOutputElement>("out-host"),
  native: $<HTMLOutputElement>("out-native"),
};
const nativeSplit = $<HTMLElement>("native-split");
const note = $<HTMLElement>("note");
const warning = $<HTMLElement>("warning");

let native: NativeKeyspace | null = null;

/** Appends text with control characters shown as escapes (`<span class="esc">\u0000</span>`). */
function appendVisible(parent: HTMLElement, text: string): void {
  for (const p of visiblePieces(text) as Piece[]) {
    if (!p.escaped) {
      parent.append(p.text);
      continue;
    }
    const esc = document.createElement("span");
    esc.className = "esc";
    esc.textContent = p.text;
    parent.append(esc);
  }
}

function setVerdict(el: HTMLElement, refusal: string | null): void {
  el.textContent = verdictText(refusal);
  el.dataset.verdict = refusal === null ? "accepted" : "refused";
}

function render(): void {
  const t = type.value as PanelType;
  idField.hidden = t !== "job";
  if (native === null) return;
  const r = report(native, queue.value, t, jobId.value);

  const parts = keyParts(r.key);
  const code = document.createElement("code");
  appendVisible(code, parts.before);
  if (parts.tag !== null) {
    const mark = document.createElement("mark");
    mark.title = "the hashtag: the cluster hashes only these bytes";
    appendVisible(mark, parts.tag);
    code.append(mark);
  }
  appendVisible(code, parts.after);
  out.key.replaceChildren(code);

  out.hashtag.replaceChildren();
  appendVisible(out.hashtag, hashtagText(r.hashtag));
  out.hashtag.dataset.none = String(r.hashtag === null);
  out.slot.textContent = String(r.slot);
  setVerdict(out.host, r.host);
  setVerdict(out.native, r.nativeVerdict.reason);

  nativeSplit.replaceChildren();
  const s = r.nativeVerdict.split;
  appendVisible(
    nativeSplit,
    s === null
      ? "split_queue_key: no split (not emq:{name}:type with a name free of {, } and NUL)"
      : `split_queue_key: queue ${JSON.stringify(s.queue)}, type ${JSON.stringify(s.type)}`,
  );

  const a = r.agreement;
  note.hidden = a.kind !== "by-design";
  note.textContent = a.kind === "by-design" ? `By design, host and native differ here: ${a.note}.` : "";
  warning.hidden = a.kind !== "disagree";
  warning.textContent = a.kind === "disagree" ? `Host and native disagree where they must agree: ${a.problem}.` : "";
  document.body.dataset.agreement = a.kind;
}

for (const t of PANEL_TYPES) {
  if (!Array.from(type.options).some((o) => o.value === t)) throw new Error(`the page lacks the type ${t}`);
}
for (const button of Array.from(document.querySelectorAll<HTMLButtonElement>("button[data-preset]"))) {
  const preset = PRESETS.find((p) => p.label === button.dataset.preset);
  if (preset === undefined) throw new Error(`unknown preset ${button.dataset.preset}`);
  button.addEventListener("click", () => {
    queue.value = preset.queue;
    render();
  });
}
$<HTMLFormElement>("compose").addEventListener("submit", (e) => e.preventDefault());
queue.addEventListener("input", render);
type.addEventListener("change", render);
jobId.addEventListener("input", render);
render();

try {
  const response = await fetch("/keyspace.wasm");
  if (!response.ok) throw new Error(`GET /keyspace.wasm: ${response.status}`);
  native = await loadNative(await response.arrayBuffer());
  render();
  document.body.dataset.ready = "true";
} catch (e) {
  out.native.textContent = `unavailable — ${e instanceof Error ? e.message : String(e)}`;
  out.native.dataset.verdict = "unavailable";
  warning.hidden = false;
  warning.textContent = "The module's keyspace (WebAssembly) did not load, so there is no native verdict.";
  document.body.dataset.ready = "error";
}
