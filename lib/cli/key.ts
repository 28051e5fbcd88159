/**
 * `emq key <queue> <type>`: the composed key, its hashtag and slot, and both verdicts — the host's
 * (`queueKey` / `jobKey`) and the native mirror's (`Keyspace.fromKey`, the port of the module's
 * layout check, which also refuses the empty name).
 *
 * @module
 */
import { hashtag, jobKey, Keyspace, KeyspaceError, queueKey, type QueueType, slot } from "../keyspace/mod.ts";

/** What `emq key` found for one queue name and type. */
export interface KeyReport {
  /** The key as the grammar composes it (unchecked, so a bad name shows what it would build). */
  readonly key: string;
  /** The cluster hashtag, or null when the whole key is hashed. */
  readonly hashtag: string | null;
  /** The cluster slot of the key. */
  readonly slot: number;
  /** `null` when the host accepts, else the host's refusal message. */
  readonly host: string | null;
  /** `null` when the native mirror accepts, else why it refuses. */
  readonly native: string | null;
}

/** Composes and checks one key; `type` is a queue type or `job:<id>`. */
export function inspectKey(queue: string, type: string): KeyReport {
  const key = `emq:{${queue}}:${type}`;
  let host: string | null = null;
  try {
    if (type.startsWith("job:")) jobKey(queue, type.slice(4));
    else queueKey(queue, type as QueueType);
  } catch (e) {
    if (!(e instanceof KeyspaceError)) throw e;
    host = e.message;
  }
  const native = Keyspace.fromKey(key, type)?.name === queue
    ? null
    : queue === ""
    ? "the module refuses the empty name: an empty {} carries no hashtag"
    : "the key does not split back into this queue and type (the key layout)";
  return { key, hashtag: hashtag(key), slot: slot(key), host, native };
}

/** Why the halves disagree, when they do: which half a call would meet first. */
function disagreement(r: KeyReport): string[] {
  if ((r.host === null) === (r.native === null)) return [];
  return [
    r.host !== null
      ? "note     the halves disagree: the module's layout check accepts the key, but the client refuses the name or id before any call is sent"
      : "note     the halves disagree: the client sends it, and the module refuses it on the server",
  ];
}

/** Renders a report as the lines `emq key` prints (and a note when the two verdicts differ). */
export function renderKeyReport(r: KeyReport): string {
  const verdict = (v: string | null): string => (v === null ? "accepted" : `refused — ${v}`);
  return [
    `key      ${JSON.stringify(r.key)}`,
    `hashtag  ${r.hashtag === null ? "(none: the whole key is hashed)" : JSON.stringify(r.hashtag)}`,
    `slot     ${r.slot}`,
    `host     ${verdict(r.host)}`,
    `native   ${verdict(r.native)}`,
    ...disagreement(r),
  ].join("\n");
}
