/**
 * Test helpers that build wire calls from the spec (`lib/wire`), so no suite spells a layout:
 * valid ids by counter, a queue's keys composed without checks, a verb's argv (one declared key,
 * the fixed arguments, then one group per job), and the exact text of a refusal.
 */
import { QUEUE_TYPES, type QueueType } from "../lib/keyspace/mod.ts";
import {
  type ArgName,
  ARGS,
  type QueueKeys,
  type Refusal,
  type RefusalParams,
  renderRefusal,
  type Verb,
  VERB_NAMES,
  VERBS,
  wireCall,
} from "../lib/wire/mod.ts";

export { VERB_NAMES as VERBS };
export type { Verb as VerbName };

const B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A valid branded JOB id for counter `n` (Base62, so string order = numeric order). */
export function jobId(n: number): string {
  let s = "";
  let v = n;
  for (let i = 0; i < 11; i++) {
    s = B62[v % 62] + s;
    v = Math.floor(v / 62);
  }
  return `JOB${s}`;
}

/** Every key of one queue, composed without checks. */
export type TestQueue =
  & QueueKeys
  & { readonly [T in QueueType]: string }
  & {
    /** The queue name. */
    readonly name: string;
    /** `emq:{q}:` */
    readonly base: string;
    /** The row of `id`. */
    row(id: string): string;
  };

/** The keys of queue `name`, composed without checks (so invalid names can be tried). */
export function queue(name: string): TestQueue {
  const base = `emq:{${name}}:`;
  const keys = Object.fromEntries(QUEUE_TYPES.map((t) => [t, `${base}${t}`])) as { [T in QueueType]: string };
  return { ...keys, name, base, row: (id: string) => `${base}job:${id}` };
}

/** Argument values by name (numbers in decimal); a missing one is the spec's sample. */
export type Values = Partial<Record<ArgName, string | number>>;

const sampleOf = (a: ArgName, given: Values): string => String(given[a] ?? ARGS[a].sample);

/**
 * The argv of `verb` on queue `q` as the spec builds it (`wireCall`): `EMQ.<verb> 1 <meta>`, the
 * fixed arguments (`fixed`, else the spec's samples), then one group per element of `groups` (each
 * argument given, else the spec's sample). A verb without a group takes none.
 */
export function argv(verb: Verb, q: QueueKeys, fixed: Values = {}, groups: readonly Values[] = []): string[] {
  const spec = VERBS[verb];
  const f = Object.fromEntries((spec.args as readonly ArgName[]).map((a) => [a, sampleOf(a, fixed)]));
  const g = spec.group.length === 0 ? [] : groups.map((v) => Object.fromEntries((spec.group as readonly ArgName[]).map((a) => [a, sampleOf(a, v)])));
  const call = wireCall(verb, q, f as never, g as never);
  return [`EMQ.${verb}`, String(call.keys.length), ...call.keys, ...call.args.map(String)];
}

/**
 * A well-formed argv of `verb` on queue `q`: the one declared key (`q.meta`), the fixed arguments,
 * then (for a verb with a group) ONE group of job `id` — a verb whose only job is its `parent`
 * (SEAL) takes `id` there; every argument not in `args` is the spec's sample.
 */
export function wellFormed(verb: Verb, q: QueueKeys, id: string, args: Values = {}): string[] {
  const spec = VERBS[verb];
  const parentOnly = spec.group.length === 0 && (spec.args as readonly ArgName[]).includes("parent");
  return argv(verb, q, parentOnly ? { parent: id, ...args } : args, [{ ...args, id }]);
}

/** The exact text of refusal `name` for `verb` (`ACK`, not `EMQ.ACK`), from the spec. */
export function refusal<R extends Refusal>(name: R, verb: Verb, params: RefusalParams<R>): string {
  return renderRefusal(name, `EMQ.${verb}`, params);
}
