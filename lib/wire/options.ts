/**
 * A job's options as the wire carries them (ENQUEUE's and SCHEDULE's `opts`, CLAIM's reply):
 * `key=value` items joined by NUL, in {@link OPTIONS} order. The server gates them
 * (docs/WIRE.md, "Options"); these two functions are the client's halves of that text.
 *
 * @module
 */
import { OPTION_JOIN, OPTION_NAMES, type OptionName } from "./verbs.ts";

/** A job's options by name, each value as the wire spells it (numbers in decimal). */
export type JobOptions = { readonly [O in OptionName]?: string | number };

/**
 * The options text of `o`: its set options as `key=value`, in spec order, joined by NUL; `""`
 * when none is set. Values are not checked here (the client's option checks run before).
 *
 * @example
 * ```ts
 * import { encodeOptions } from "./options.ts";
 * encodeOptions({ dedup: "order-42", dedup_ms: 10000 }); // "dedup=order-42\0dedup_ms=10000"
 * ```
 */
export function encodeOptions(o: JobOptions): string {
  const items: string[] = [];
  for (const name of OPTION_NAMES) {
    const v = o[name];
    if (v !== undefined) items.push(`${name}=${typeof v === "number" ? String(v) : v}`);
  }
  return items.join(OPTION_JOIN);
}

/**
 * The options a job was admitted with, read back from the text CLAIM hands out (which the server
 * gated): each item's key and its value (everything after the first `=`). Keys this client does
 * not know (a newer wire's) are kept, so they can be shown.
 */
export function decodeOptions(text: string): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  if (text === "") return out;
  for (const item of text.split(OPTION_JOIN)) {
    const eq = item.indexOf("=");
    if (eq > 0) out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}
