/**
 * Keys taken apart, at both levels: {@link splitQueueKey} (the port of the native
 * `split_queue_key`) and its type-level twin {@link ParseQueueKey}.
 *
 * @module
 */
import { validQueue } from "./queue_name.ts";

/** A key taken apart: the queue name between the braces and the type after `}:`. */
export interface SplitKey {
  /** The queue name (possibly empty). */
  readonly queue: string;
  /** Everything after `}:` — `pending`, …, or `job:<id>`. */
  readonly type: string;
}

const PREFIX = "emq:{";

/**
 * The port of the native `split_queue_key`: the literal `emq:{`, the name up to the first `}`,
 * then `}:`, the name passing {@link validQueue}; `null` otherwise. The empty name is allowed here,
 * as in the native split (the native layout check refuses it later).
 */
export function splitQueueKey(key: string): SplitKey | null {
  if (!key.startsWith(PREFIX)) return null;
  const close = key.indexOf("}", PREFIX.length);
  if (close < 0 || key.charCodeAt(close + 1) !== 0x3a /* : */) return null;
  const queue = key.slice(PREFIX.length, close);
  if (!validQueue(queue)) return null;
  return { queue, type: key.slice(close + 2) };
}

/** What {@link ParseQueueKey} gives for a key outside the grammar: the rule it broke. */
export type KeyParseError<Message extends string> = { readonly error: Message };

/**
 * A key type back to its queue and type, the type-level twin of `splitQueueKey`:
 * `ParseQueueKey<"emq:{orders}:job:JOB0Nb1VTbfnu4">` is `{ queue: "orders"; type: "job:JOB0Nb1VTbfnu4" }`.
 * A key outside the grammar gives a {@link KeyParseError} naming the rule.
 */
export type ParseQueueKey<K extends string> = K extends `emq:{${infer Q}}:${infer T}`
  ? Q extends `${string}}${string}` ? KeyParseError<"the queue name must end at the first '}', followed by ':'">
  : Q extends `${string}{${string}` ? KeyParseError<"queue name must not contain '{'">
  : Q extends `${string}\0${string}` ? KeyParseError<"queue name must not contain NUL">
  : { queue: Q; type: T }
  : KeyParseError<"a queue key starts with 'emq:{' and has '}:' after the name">;
