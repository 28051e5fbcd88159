/**
 * The key panel's logic, free of the DOM: compose a key from a queue, a type and (for a row) an
 * id; ask the host (`mod.ts`, through `emq key`'s own {@link inspectKey}) and the native module
 * (its Rust keyspace in WebAssembly); and judge whether the two halves agree where they must.
 *
 * @module
 */
import { hashtag, QUEUE_TYPES, type QueueType, splitQueueKey, validQueue } from "../../../mod.ts";
import { inspectKey, type KeyReport } from "../../../lib/cli/key.ts";
import type { NativeKeyspace, NativeVerdict } from "./native.ts";

/** One of {@link PANEL_TYPES}: a queue key type, or `job` for a row. */
export type PanelType = QueueType | "job";

/** The types the panel offers: the grammar's queue key types (`QUEUE_TYPES`), then a job row. */
export const PANEL_TYPES: readonly PanelType[] = [...QUEUE_TYPES, "job"];

/** The branded id a `job` row starts with (docs/GRAMMAR.md's example). */
export const SAMPLE_JOB_ID = "JOB0Nb1VTbfnu4";

/** The presets: a button label and the queue name it fills in. */
export const PRESETS: readonly { readonly label: string; readonly queue: string }[] = [
  { label: "empty name", queue: "" },
  { label: "a}b", queue: "a}b" },
  { label: "a colon", queue: "a:b" },
];

/** The type after `}:`: the type itself, or `job:<id>` for a row. */
export function keyType(type: PanelType, id: string): string {
  return type === "job" ? `job:${id}` : type;
}

/** How the two halves stand: agreeing, differing by design (with why), or disagreeing (a bug). */
export type Agreement =
  | { readonly kind: "agree" }
  | { readonly kind: "by-design"; readonly note: string } // `note`: why, e.g. "the host accepts …"
  | { readonly kind: "disagree"; readonly problem: string };

/** Everything the panel shows for one queue, type and id. */
export interface PanelReport extends KeyReport {
  /** The type after `}:` (`job:<id>` for a row). */
  readonly type: string;
  /** The native module's verdict. */
  readonly nativeVerdict: NativeVerdict;
  /** Whether they agree where they must. */
  readonly agreement: Agreement;
}

const says = (ok: boolean): string => (ok ? "accepts" : "refuses");

/**
 * Where host and native must agree, and where they differ by design (docs/GRAMMAR.md):
 * - both split the key the same way (`splitQueueKey` is the port of `split_queue_key`);
 * - on the name: the module accepts exactly the names the host accepts, less the empty name,
 *   which the host accepts and the module refuses (an empty `{}` carries no hashtag);
 * - a job id is the host's to check: the module's layout check does not look at it.
 */
export function judge(queue: string, key: string, hostRefusal: string | null, native: NativeVerdict): Agreement {
  const hostSplit = splitQueueKey(key);
  const nativeSplit = native.split;
  if (JSON.stringify(hostSplit) !== JSON.stringify(nativeSplit)) {
    return {
      kind: "disagree",
      problem: `the host splits the key into ${JSON.stringify(hostSplit)}, the module into ${JSON.stringify(nativeSplit)}`,
    };
  }
  const nameOk = validQueue(queue);
  const nativeMust = nameOk && queue !== "";
  if (native.accepted !== nativeMust) {
    return {
      kind: "disagree",
      problem: `the host ${says(nameOk)} the name ${JSON.stringify(queue)}, so the module must ${nativeMust ? "accept" : "refuse"} it, but it ${
        says(native.accepted)
      } the key`,
    };
  }
  if (queue === "") {
    return {
      kind: "by-design",
      note: "the host accepts the empty name (the Lua twin runs it on a standalone " +
        "server); the module refuses it, because an empty {} carries no hashtag",
    };
  }
  if (nameOk && hostRefusal !== null && native.accepted) {
    return {
      kind: "by-design",
      note: "the job id is the host's to check; the module's layout check does not " +
        "look at it (a transition gates the id on its JOB prefix)",
    };
  }
  return { kind: "agree" };
}

/** Composes the key and runs both halves on it. */
export function report(native: NativeKeyspace, queue: string, type: PanelType, id: string): PanelReport {
  const t = keyType(type, id);
  const host = inspectKey(queue, t);
  const nativeVerdict = native.verdict(host.key, t);
  return { ...host, type: t, nativeVerdict, agreement: judge(queue, host.key, host.host, nativeVerdict) };
}

/** A verdict in words, as `emq key` prints it: `accepted` or `refused — <why>`. */
export function verdictText(refusal: string | null): string {
  return refusal === null ? "accepted" : `refused — ${refusal}`;
}

/** The hashtag in words: quoted as it is (`emq key` prints it as JSON, for a terminal). */
export function hashtagText(tag: string | null): string {
  // quoted as it is: JSON would double a backslash (`a\b` read as "a\\b"); the page shows
  // control characters visibly itself
  return tag === null ? "(none: the whole key is hashed)" : `"${tag}"`;
}

/**
 * The key in three parts around its hashtag (the cluster's rule: between the first `{` and the
 * next `}` when non-empty); `tag` is null when the whole key is hashed.
 */
export function keyParts(key: string): { readonly before: string; readonly tag: string | null; readonly after: string } {
  const tag = hashtag(key);
  if (tag === null) return { before: key, tag: null, after: "" };
  const from = key.indexOf("{") + 1;
  return { before: key.slice(0, from), tag, after: key.slice(from + tag.length) };
}
