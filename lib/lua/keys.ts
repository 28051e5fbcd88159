/**
 * The key types as the scripts spell keys, built from the keyspace's lists (`QUEUE_TYPES`,
 * `QUEUE_PREFIXES`): `base .. '${KEY.pending}'`, `base .. '${KEY_PREFIX.lane}' .. L`. A misspelt type
 * is then a compile error, not a key no verb reads.
 *
 * @module
 */
import { QUEUE_PREFIXES, QUEUE_TYPES, type QueuePrefix, type QueueType } from "../keyspace/mod.ts";

/** Each plain key type, mapped to itself: `KEY.pending` is `"pending"`. */
export const KEY: { readonly [T in QueueType]: T } = Object.freeze(
  Object.fromEntries(QUEUE_TYPES.map((t) => [t, t])),
) as { readonly [T in QueueType]: T };

/** Each prefixed key type, mapped to its prefix: `KEY_PREFIX.lane` is `"lane:"`. */
export const KEY_PREFIX: { readonly [P in QueuePrefix]: `${P}:` } = Object.freeze(
  Object.fromEntries(QUEUE_PREFIXES.map((p) => [p, `${p}:`])),
) as { readonly [P in QueuePrefix]: `${P}:` };

/** Whether `s` is a key type a script may append to a queue's base: a plain type or a prefix. */
export function isKeySuffix(s: string): boolean {
  return Object.hasOwn(KEY, s) || QUEUE_PREFIXES.some((p) => s === `${p}:`);
}
