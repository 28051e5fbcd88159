/**
 * Test helpers that build wire calls from the spec (`lib/wire`), so no suite spells a layout:
 * valid ids by counter, a verb's well-formed argv, and the raw argv either backend sends.
 */
import { ARGS, type ArgName, type QueueKeys, type Verb, VERB_NAMES, VERBS, wireCall } from "../lib/wire/mod.ts";

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
export interface TestQueue extends QueueKeys {
  /** The queue name. */
  readonly name: string;
  /** `emq:{q}:meta` */
  readonly meta: string;
  /** The row of `id`. */
  row(id: string): string;
}

/** The keys of queue `name`, composed without checks (so invalid names can be tried). */
export function queue(name: string): TestQueue {
  const base = `emq:{${name}}:`;
  return {
    name,
    base,
    pending: `${base}pending`,
    active: `${base}active`,
    schedule: `${base}schedule`,
    dead: `${base}dead`,
    meta: `${base}meta`,
    row: (id: string) => `${base}job:${id}`,
  };
}

/** A well-formed argv of `verb` on queue `q` (for row verbs, of job `id`): every other argument is the spec's sample. */
export function wellFormed(verb: Verb, q: QueueKeys, id: string, args: Partial<Record<ArgName, string>> = {}): string[] {
  const values = Object.fromEntries(
    (VERBS[verb].args as readonly ArgName[]).map((a) => [a, args[a] ?? (a === "id" ? id : ARGS[a].sample)]),
  );
  const call = wireCall(verb, q, values as never);
  return [`EMQ.${verb}`, String(call.keys.length), ...call.keys, ...call.args.map(String)];
}
