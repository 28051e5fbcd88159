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
