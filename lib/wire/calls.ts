/**
 * Wire calls built from the spec: the one declared key (the queue's `meta`), the verb's fixed
 * arguments in order, then one group of arguments per job. Both backends send these; only the
 * command differs (`EMQ.<VERB>` or `EVALSHA`). Nothing here spells a layout: it is read from
 * {@link VERBS}.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { GlideString } from "@valkey/valkey-glide";
import { type ArgName, type Verb, VERBS, type VerbSpec } from "./verbs.ts";

/** One verb call: its declared keys and arguments, in wire order. */
export interface WireCall {
  /** The verb (`ENQUEUE` …); the command is `EMQ.<verb>`. */
  readonly verb: Verb;
  /** Declared keys: the queue's `meta`. */
  readonly keys: string[];
  /** Arguments, in the verb's order: the fixed ones, then one group per job. */
  readonly args: GlideString[];
}

/** The keys of one queue a call is built from (a `Keyspace` is one). */
export interface QueueKeys {
  /** `emq:{q}:meta`, the one declared key of every verb. */
  readonly meta: string;
}

/** An argument value: bytes or text as sent, a number in decimal. */
export type ArgValue = GlideString | number;

/** The fixed arguments of verb `V`, by name. */
export type FixedArgs<V extends Verb> = { readonly [A in (typeof VERBS)[V]["args"][number]]: ArgValue };

/** One group (one job) of verb `V`'s arguments, by name. */
export type GroupArgs<V extends Verb> = { readonly [A in (typeof VERBS)[V]["group"][number]]: ArgValue };

// The commonest arguments (a settle's 0 delay, empty reason and result) as bytes made once: glide
// copies an argument's bytes and would otherwise encode each string anew.
const ZERO: GlideString = Buffer.alloc(1, "0");
const EMPTY: GlideString = Buffer.alloc(0);
const wire = (v: ArgValue): GlideString => typeof v === "number" ? (v === 0 ? ZERO : String(v)) : v === "" ? EMPTY : v;

/**
 * The call of `verb` on the queue of `ks`: `fixed` arguments, then one group per element of
 * `groups` (a verb without a group takes none). Numbers are sent in decimal.
 */
export function wireCall<V extends Verb>(
  verb: V,
  ks: QueueKeys,
  fixed: FixedArgs<V>,
  groups: ReadonlyArray<GroupArgs<V>> = [],
): WireCall {
  const spec: VerbSpec = VERBS[verb];
  const f = fixed as unknown as Readonly<Record<ArgName, ArgValue>>;
  const args: GlideString[] = spec.args.map((a) => wire(f[a]));
  for (const g of groups as unknown as ReadonlyArray<Readonly<Record<ArgName, ArgValue>>>) {
    for (const a of spec.group) args.push(wire(g[a]));
  }
  return { verb, keys: [ks.meta], args };
}

/** How many groups (jobs) `call` carries. */
export function groupCount(call: WireCall): number {
  const spec: VerbSpec = VERBS[call.verb];
  return spec.group.length === 0 ? 0 : (call.args.length - spec.args.length) / spec.group.length;
}
