/**
 * Wire calls built from the spec: a verb's declared keys from one queue's keyspace, in the verb's
 * order, and its arguments in the verb's order. Both backends send these; only the command differs
 * (`EMQ.<VERB>` or `EVALSHA`). Nothing here spells a layout: it is read from {@link VERBS}.
 *
 * @module
 */
import type { GlideString } from "@valkey/valkey-glide";
import { type ArgName, type KeyRole, type Verb, VERBS } from "./verbs.ts";

/** One verb call: its keys and arguments, in wire order. */
export interface WireCall {
  /** The verb (`ENQUEUE` …); the command is `EMQ.<verb>`. */
  readonly verb: Verb;
  /** Declared keys, in the verb's order. */
  readonly keys: string[];
  /** Arguments, in the verb's order. */
  readonly args: GlideString[];
}

/** The keys of one queue a call is built from (a `Keyspace` is one). */
export interface QueueKeys {
  /** `emq:{q}:` */
  readonly base: string;
  /** `emq:{q}:pending` */
  readonly pending: string;
  /** `emq:{q}:active` */
  readonly active: string;
  /** `emq:{q}:schedule` */
  readonly schedule: string;
  /** `emq:{q}:dead` */
  readonly dead: string;
}

/** An argument value: bytes or text as sent, a number in decimal. */
export type ArgValue = GlideString | number;

/** The arguments of verb `V`, by name. */
export type CallArgs<V extends Verb> = { readonly [A in (typeof VERBS)[V]["args"][number]]: ArgValue };

/** The key of `role` in `ks`; a row is the row of `id`. */
export function keyOf(ks: QueueKeys, role: KeyRole, id: string): string {
  return role === "row" ? `${ks.base}job:${id}` : role === "base" ? ks.base : ks[role];
}

/** The call of `verb` on the queue of `ks` with `args` (numbers are sent in decimal). */
export function wireCall<V extends Verb>(verb: V, ks: QueueKeys, args: CallArgs<V>): WireCall {
  const spec = VERBS[verb];
  const values = args as unknown as Readonly<Record<ArgName, ArgValue>>;
  const id = spec.args[0] === "id" ? String(values.id) : "";
  return {
    verb,
    keys: spec.keys.map((role) => keyOf(ks, role, id)),
    args: spec.args.map((a) => {
      const v = values[a];
      return typeof v === "number" ? String(v) : v;
    }),
  };
}
