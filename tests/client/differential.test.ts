/**
 * Differential test: random sequences of wire calls run against the Lua twin and the native module
 * side by side, on twin queues of one server; every reply and the keyspaces after every step must
 * be identical, times included (tests/client/_twins.ts says how the twins see one clock).
 *
 * Most steps are valid calls over a populated queue (each run opens with admissions, a flow, a
 * limit or a scheduler), drawn from a model of what is live — the jobs' states and their holders'
 * tokens, read from the keyspace after each step: admissions with lanes, priorities, delays and
 * deduplication keys; limits and parks of the queue and its lanes; schedulers and their ticks;
 * claims and every settle (ACK, RETRY, BURY, RELEASE and SETTLE) with the tokens actually handed
 * out, a few stale; flows (FLOW, ADOPT and SEAL of open parents, OUTBOX leases, UNBOX with the
 * tokens leased, APPLY of the outcomes of children elsewhere). Times compare exactly (a step that
 * spanned a millisecond runs again: tests/client/_twins.ts); the random runs print what they
 * reached, per verb. A minority are calls of every verb of the spec with
 * arguments drawn valid and malformed alike (built from `lib/wire`: a verb or argument added there
 * is drawn here without a line of this file changing). The events stream compares by its entries'
 * fields, in order, not by their ids. Runs only when libemq.so is built and registers its commands.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { keyspace } from "../../mod.ts";
import { type Connection } from "../../lib/client/connection.ts";
import {
  type ArgName,
  type FixedArgs,
  type GroupArgs,
  MAX_ERROR_BYTES,
  MAX_PAYLOAD_BYTES,
  type Verb,
  VERBS,
  type VerbSpec,
  wireCall,
} from "../../lib/wire/mod.ts";
import { type BackendKind, MODULE_WORKS, type Outcome, sleep, TOPOLOGIES, useSites, wire, wireArgv } from "./_harness.ts";
import { clear, evalsha, loadScripts, loose, named, near, restore, save, type Saved, type Snapshot, snapshot, twinBatch, type Window } from "./_twins.ts";
import { claimedTuple } from "../native/_native.ts";

const IDS = ["JOB00000000001", "JOB00000000002", "JOB00000000003", "JOB00000000004", "XOB00000000001"];
const JUNK = ["0", "-1", "", "1.5", "abc", " 1", "+1", "1000000000000000"];
/**
 * Tokens: `#k` is the k-th token this twin's CLAIMs handed out (`#-1` the last; tokens start above
 * now × 1000, so each twin has its own), `#0z` that token zero-padded (past the 16-digit gate), and
 * small tokens and junk (never held).
 */
const TOKENS = ["#0", "#1", "#2", "#3", "#-1", "#-2", "#0z", "1", "007", ...JUNK];
/** Limits and counts: any value is deterministic. */
const LIMITS = ["1", "2", "007", "999999999999999", ...JUNK];
/**
 * Leases and delays: 30 ms expires only across a SLEEP step (40 ms), never between the two twins'
 * calls of one step, so both twins see the same expiries.
 */
const DURATIONS = ["030", "60000", "999999999999999", ...JUNK];
const AGES = ["60000", "999999999999999", ...JUNK];
const DUES = ["1000", "007", "900000000000000", ...JUNK];
const TEXTS = ["", "p", "héllo", "r".repeat(4096), "r".repeat(4097)];
/** Scheduler names (the name rule), specs and missed-run bounds, valid and not. */
const NAMES = ["s", "t", "a{b", "", "n".repeat(1025)];
const SPECS = ["every 100", "every 200", "cron * * * * *", "x".repeat(1025)];
const MAXES = ["0", "1", "5", "10001", ...JUNK];
/** Job options, valid and not: none, each option, a key held twice, throttles and debounces, bad ones. */
const OPTS = [
  "",
  "",
  "timeout_ms=5000",
  "dedup=k",
  "dedup=k\0debounce=1",
  "dedup=k\0dedup_ms=30",
  "dedup=j\0dedup_ms=999999",
  "dedup=k\0dedup_ms=30\0debounce=1",
  "timeout_ms=0",
  "dedup=a{b",
  "debounce=1",
  "lane=x",
  "dedup=k\0dedup=j",
  "=",
  "traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
  "dedup=k\0traceparent=00-1-2-01",
  "traceparent=a}b",
  "traceparent=",
  "name=send-invoice",
  "lane=t1\0name=n",
  "name=a}b",
  "name=",
  // priorities: each level its own ready list, FIFO inside; 0 is pending's
  "priority=3",
  "priority=1",
  "priority=1",
  "priority=0",
  "priority=01",
  "priority=2097152",
  "priority=x",
  "dedup=k\0priority=2",
  // lanes: round-robin between a, b and the default lane, with priorities inside
  "lane=a",
  "lane=b",
  "lane=a\0priority=2",
  "lane=b\0priority=1",
  "lane=",
  "lane=a{b",
  "lane=a\0dedup=k",
];

/**
 * Values for every argument of the spec, valid and junk alike. Typed by `ArgName`: an argument
 * the spec gains without values here does not compile, so every verb is driven by construction.
 */
const VALUES: { readonly [A in ArgName]: readonly string[] } = {
  id: IDS,
  token: TOKENS,
  payload: TEXTS,
  opts: OPTS,
  due_ms: DUES,
  lease_ms: DURATIONS,
  count: LIMITS,
  // never a wait: the twins' calls go in one batch, where a blocking CLAIM answers at once anyway
  block_ms: ["0", ...JUNK],
  delay_ms: DURATIONS,
  limit: LIMITS,
  reason: TEXTS,
  line: ["", "step 1", "héllo", "l".repeat(1025)],
  failure: ["", "", '{"at":1,"name":"Error","message":"m","stack":"Error: m\\n    at f"}', "x".repeat(MAX_ERROR_BYTES + 1)],
  value: TEXTS,
  dead_max: LIMITS,
  // ages: none that ends within a run (a row's age is not an expiry the runner sees coming)
  dead_age_ms: AGES,
  // results: none, text, the most a result may be and one byte more (refused)
  result: ["", "", "r", '{"n":1}', "héllo", "x".repeat(MAX_PAYLOAD_BYTES + 1)],
  // completed jobs: none kept (0), a few (retention by count at every ACK and CLAIM), the default
  completed_max: ["0", "1", "2", "1000", ...JUNK],
  completed_age_ms: AGES,
  // events: none (0; RETAIN deletes the stream), a stream trimmed at every entry (1, 3), the default
  events_max: ["0", "1", "3", "10000", ...JUNK],
  history_minutes: ["0", "1", "2", "1440", "10080", "10081", ...JUNK],
  name: NAMES,
  spec: SPECS,
  // a TICK fires only when its expected time is the scheduler's next run: both drawn from DUES
  next_ms: DUES,
  expected_ms: DUES,
  max_missed: MAXES,
  tick_ms: DUES,
  // limits: rates of a period no test run outlasts (both twins count the same tokens), parks that
  // end only across a SLEEP step
  concurrency: ["0", "1", "2", "1000001", ...JUNK],
  rate_max: ["0", "1", "2", "1000001", ...JUNK],
  rate_per_ms: ["60000", "86400000", "86400001", ...JUNK],
  rate_burst: ["1", "3", "1000001", ...JUNK],
  // no short park of a lane: one that ends while the queue is paused or parked is the open
  // divergence below ("OPEN")
  penalty_ms: ["60000", "86400001", ...JUNK],
  // lanes: the queue (empty), two lanes the options also use, and names the gate refuses
  scope: ["0", "1", "2", "3", ...JUNK],
  lane: ["", "", "a", "b", "x{y", "\0", ...JUNK],
  // SETTLE: each op twice as likely as junk (an op past 3, a negative, a word); claims of none, a
  // few, more than a batch
  op: ["0", "1", "2", "3", "0", "1", "2", "3", "4", "-1", "x"],
  want: ["0", "0", "1", "3", "10001", "-1", "x"],
  // flows: `@self` is the twin's own queue (its children made at once, its outbox's entries applied
  // in it); entries for it and for another queue, malformed ones
  parent: IDS,
  parent_opts: OPTS,
  queue: ["@self", "@self", "other", "x{y", ""],
  policy: ["0", "1", "2", "3", "4", "x"],
  open: ["0", "1", "1", "2"],
  // REQUEUE's and REMOVE's flags (wire 17)
  keep_attempts: ["0", "1", "1", "2"],
  cleaned: ["0", "1", "1", "2"],
  within_ms: ["0", "0", "1", "60000", "x"],
  from: ["0", "1", "2", "3", "100000", "x"],
  // a subtree (a child with one child of its own in this queue): a leaf's body too
  body: [...TEXTS, "1\x001\x00mJOB00000000008\0@self\x000\x000\x001\x00g"],
  entry: [
    "node\0@self\0JOB00000000007\0other\0JOB00000000001\x000\x000\x001\x001\x00mJOB00000000008\0@self\x000\x000\x001\x00g",
    "done\0@self\0JOB00000000001\x000\0JOB00000000002\0completed\0r",
    "done\0@self\0JOB00000000001\x001\0JOB00000000003\0failed\0no",
    "child\0@self\0JOB00000000004\0other\0JOB00000000001\x000\x000\0p",
    "child\0other\0JOB00000000001\0q\0JOB00000000002\x000\x000\0p",
    "cancel\0@self\0JOB00000000004\0other\0JOB00000000001\x000\0",
    "cancel\0@self\0JOB00000000009\0other\0JOB00000000001\x001\0",
    "cancel\0@self\0JOB00000000004\0other\0JOB00000000001\x000\0x",
    "",
    "done",
    "r".repeat(4097),
  ],
  deadline: DUES,
};

/** How often each verb is drawn: admissions and claims more, so the others find jobs to act on. */
const WEIGHTS: Partial<Record<Verb, number>> = { ENQUEUE: 4, SCHEDULE: 2, CLAIM: 4, SETTLE: 4, DROP: 1 };

/** A wire call: a verb of the spec with its arguments. */
type Call = { verb: Verb; fixed: Record<string, string>; groups: Record<string, string>[] };
/**
 * One step: a call, a pause that lets short times expire, or raw commands on both twins' keys
 * (`{Q}` their queue: a hand-edited key).
 */
type Step = Call | { verb: "SLEEP" } | { verb: "RAW"; commands: string[][] };

const values = (names: readonly ArgName[]): fc.Arbitrary<Record<string, string>> =>
  fc.record(Object.fromEntries(names.map((a) => [a, fc.constantFrom(...VALUES[a])])));

/** The steps of `verb`: its fixed arguments and 0–3 groups (fewer than it takes: its refusal). */
function stepsOf(verb: Verb): fc.Arbitrary<Call> {
  const spec: VerbSpec = VERBS[verb];
  const groups: fc.Arbitrary<Record<string, string>[]> = spec.group.length === 0
    ? fc.constant([])
    : fc.array(values(spec.group), { minLength: spec.minGroups ?? 1, maxLength: 3 });
  return fc.record({ verb: fc.constant(verb), fixed: values(spec.args), groups });
}

/** Random runs per topology (EMQ_DIFF_RUNS: more for a longer campaign). */
const RUNS = Number(process.env.EMQ_DIFF_RUNS ?? 40);
/**
 * The runs' seed: fixed in the test command, so that it gates changes with the same sequences every
 * time (a divergence the exploration finds becomes a known sequence, not a CI that fails by luck);
 * EMQ_DIFF_SEED=random draws new ones (campaigns, exploring), a number replays one.
 */
const SEED = process.env.EMQ_DIFF_SEED === "random" ? undefined : Number(process.env.EMQ_DIFF_SEED ?? 20261207);

const VERB_NAMES = Object.keys(VERBS) as Verb[];
/** A call of any verb with arguments drawn valid and malformed alike: the drawn sequences' minority. */
const junk: fc.Arbitrary<Call> = fc.oneof(...VERB_NAMES.map((verb) => ({ arbitrary: stepsOf(verb), weight: WEIGHTS[verb] ?? 2 })));

/** What a twin's tokens resolve against: the tokens it handed out so far, and its keyspace. */
interface Held {
  seen: number[];
  snap: Snapshot;
  /** The keyspace dumped: a step whose twins read different ms runs again from it. */
  saved: Saved;
}

/**
 * A token choice for a twin: `@<id>` the token of the job's row in its keyspace, `@~<id>` that
 * token − 1 (stale), a choice of {@link TOKENS}, or a literal.
 */
function token(choice: string, { seen, snap }: Held): string {
  if (choice.startsWith("@")) {
    const stale = choice.startsWith("@~");
    const row = snap[`emq:{Q}:job:${choice.slice(stale ? 2 : 1)}`]?.value as Record<string, string> | undefined;
    const t = Number(row?.token ?? "1");
    return String(stale && t > 1 ? t - 1 : t);
  }
  if (!choice.startsWith("#")) return choice;
  const k = Number.parseInt(choice.slice(1), 10);
  const t = seen.at(k);
  if (t === undefined) return "1";
  return choice.endsWith("z") ? `0${t}` : String(t);
}

/** A deadline choice for a twin: `@box:<entry>` the entry's score in its outbox (the token OUTBOX handed it), else a literal. */
function deadline(choice: string, { snap }: Held): string {
  if (!choice.startsWith("@box:")) return choice;
  const entry = choice.slice("@box:".length).replaceAll("@self", "{Q}");
  const v = snap["emq:{Q}:outbox"]?.value as Array<[string, string]> | undefined;
  return v?.find(([e]) => e === entry)?.[1] ?? "1";
}

/** Whether a reply's element is a claimed job: one bulk string opening with its header (not next_ms, SETTLE's statuses or an admission's ids). */
function isJob(j: unknown): j is string | Uint8Array {
  const text = typeof j === "string" ? j : j instanceof Uint8Array ? new TextDecoder().decode(j) : null;
  return text !== null && /^\d+ \d+ \d+ \d+ -?\d+\n/.test(text);
}

/**
 * The tokens a CLAIM reply (`[next_ms, job…]`) or a SETTLE reply
 * (`[next_ms, [status…], job…]`) hands out.
 */
function tokensOf(o: Outcome): number[] {
  if (!("ok" in o) || !Array.isArray(o.ok)) return [];
  return (o.ok as unknown[]).slice(1).filter(isJob).map((j) => claimedTuple(j)[3]);
}

/**
 * The step as a wire call built from the spec (the queue's meta, fixed args, one group per job),
 * its token choices resolved against this twin's tokens.
 */
function call(queue: string, s: Call, held: Held): [Verb, string[], string[]] {
  const self = (args: Record<string, string>): Record<string, string> =>
    Object.fromEntries(Object.entries(args).map(([k, v]) => [k, v.replaceAll("@self", queue)]));
  const resolve = (args: Record<string, string>): Record<string, string> => ({
    ...self(args),
    ...("token" in args ? { token: token(args.token!, held) } : {}),
    ...("deadline" in args ? { deadline: deadline(args.deadline!, held) } : {}),
  });
  const c = wireCall(s.verb, keyspace(queue), resolve(s.fixed) as FixedArgs<Verb>, s.groups.map(resolve) as GroupArgs<Verb>[]);
  return [c.verb, c.keys, c.args.map(String)];
}

/** Twin queue names in one cluster slot: the scripts' `<stem>-s`, the module's `<stem>-m<k>`. */
function twins(stem: string): Record<BackendKind, string> {
  const scripts = `${stem}-s`;
  const target = keyspace(scripts).slot;
  for (let k = 0;; k++) {
    const module = `${stem}-m${k}`;
    if (keyspace(module).slot === target) return { scripts, module };
  }
}

/** The model a valid step is drawn from: the scripts twin's keyspace after the last step. */
class Live {
  constructor(readonly snap: Snapshot, private fresh: number) {}
  /** The ids of the jobs whose row is in `state`. */
  ids(state?: string): string[] {
    const out: string[] = [];
    for (const [key, { value }] of Object.entries(this.snap)) {
      if (!key.startsWith("emq:{Q}:job:")) continue;
      if (state === undefined || (value as Record<string, string>).state === state) out.push(key.slice("emq:{Q}:job:".length));
    }
    return out;
  }
  /** The schedulers, each with its next run. */
  schedulers(): Array<[string, string]> {
    return Object.entries(this.snap)
      .filter(([k]) => k.startsWith("emq:{Q}:scheduler:"))
      .map(([k, { value }]) => [k.slice("emq:{Q}:scheduler:".length), (value as Record<string, string>).next_ms ?? "1"]);
  }
  /** The row of `id`, or undefined. */
  row(id: string): Record<string, string> | undefined {
    return this.snap[`emq:{Q}:job:${id}`]?.value as Record<string, string> | undefined;
  }
  /** The parents still waiting for children (`open`: only those that may adopt more), each with its count of children. */
  parents(open = false): Array<[string, number]> {
    return this.ids("waiting")
      .filter((id) => this.row(id)?.children !== undefined && (!open || this.row(id)?.open === "1"))
      .map((id) => [id, Number(this.row(id)!.children)]);
  }
  /** A waiting parent's children in another queue, each as [place, child id]. */
  away(parent: string): Array<[string, string]> {
    return Object.entries(this.row(parent) ?? {})
      .filter(([f, v]) => f.startsWith("child:") && v.split("\0")[0] !== "{Q}")
      .map(([f, v]) => [f.slice("child:".length), v.split("\0")[1]!]);
  }
  /** The outbox's entries (the queue's name as `@self`). */
  outbox(): string[] {
    const v = this.snap["emq:{Q}:outbox"]?.value as Array<[string, string]> | undefined;
    return (v ?? []).map(([e]) => e.replaceAll("{Q}", "@self"));
  }
  /** A new job id (each run's ids count up). */
  id(): string {
    return `JOB${String(++this.fresh).padStart(11, "0")}`;
  }
  get used(): number {
    return this.fresh;
  }
}

/** Draws from a list of random numbers (an intent's), wrapping around. */
class Pick {
  private i = 0;
  constructor(private readonly r: readonly number[]) {}
  int(n: number): number {
    return this.r[this.i++ % this.r.length]! % n;
  }
  one<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  chance(p: number): boolean {
    return this.int(1000) < p * 1000;
  }
  /** 1 to `n` distinct members of `xs`. */
  some<T>(xs: readonly T[], n: number): T[] {
    const k = 1 + this.int(Math.min(n, xs.length));
    const pool = [...xs];
    return Array.from({ length: k }, () => pool.splice(this.int(pool.length), 1)[0]!);
  }
}

/** Short durations (30 ms) end before the next step; long ones outlast any run. */
const SHORT = "030";
const LONG = "60000";
const LANES = ["a", "b", "c"];

/** A job's options: a lane, a priority, a deduplication key (a window, a debounce), a time limit. */
function options(p: Pick): string {
  const items: string[] = [];
  if (p.chance(0.1)) items.push("timeout_ms=5000");
  if (p.chance(0.3)) {
    items.push(`dedup=${p.one(["k", "j"])}`);
    if (p.chance(0.4)) items.push(`dedup_ms=${p.one([SHORT, "999999"])}`);
    if (p.chance(0.3)) items.push("debounce=1");
  }
  if (p.chance(0.5)) items.push(`lane=${p.one(LANES)}`);
  if (p.chance(0.4)) items.push(`priority=${p.one(["1", "3", "0"])}`);
  return items.join("\0");
}

/** What a step does: a kind and the random numbers it resolves with against the model. */
type Intent = { kind: string; r: number[] } | { kind: "JUNK"; call: Call };

const KINDS: Record<string, number> = {
  ENQUEUE: 6,
  SCHEDULE: 2,
  CLAIM: 6,
  ACK: 3,
  RETRY: 2,
  BURY: 2,
  RELEASE: 2,
  SETTLE: 7,
  EXTEND: 1,
  PROGRESS: 1,
  REMOVE: 1,
  CANCEL: 2,
  REQUEUE: 1,
  RUN: 1,
  PROMOTE: 1,
  REAP: 1,
  PAUSE: 1,
  RESUME: 1,
  LIMIT: 3,
  PENALIZE: 1,
  RETAIN: 2,
  SCHEDULER: 1,
  TICK: 3,
  UNSCHEDULE: 1,
  DROP: 1,
  SLEEP: 2,
  FLOW: 2,
  ADOPT: 1,
  SEAL: 1,
  OUTBOX: 1,
  APPLY: 1,
  TELL: 1,
  UNBOX: 1,
  LOG: 1,
};

/** An intent of `kind` with its random numbers. */
const intentOf = (kind: string): fc.Arbitrary<Intent> => fc.record({ kind: fc.constant(kind), r: fc.array(fc.nat(), { minLength: 24, maxLength: 24 }) });

/** A run's opening: a populated queue (admissions, a flow, a limit, a scheduler, retention) before anything else. */
const opening: fc.Arbitrary<Intent[]> = fc.array(
  fc.oneof(
    { arbitrary: intentOf("ENQUEUE"), weight: 6 },
    intentOf("SCHEDULE"),
    intentOf("FLOW"),
    intentOf("LIMIT"),
    intentOf("SCHEDULER"),
    intentOf("RETAIN"),
  ),
  { minLength: 2, maxLength: 5 },
);

const intent: fc.Arbitrary<Intent> = fc.oneof(
  ...Object.entries(KINDS).map(([kind, weight]) => ({
    arbitrary: intentOf(kind),
    weight,
  })),
  // the minority: any verb, arguments valid or malformed
  { arbitrary: junk.map((call) => ({ kind: "JUNK" as const, call })), weight: 5 },
);

/** A token for a held job: its own (mostly), stale, or one never handed out. */
function tokenFor(p: Pick, id: string, stale = 0.12): string {
  return p.chance(1 - stale - 0.08) ? `@${id}` : p.chance(0.6) ? `@~${id}` : "1";
}

/** The groups of a settle-like verb over 1–3 held jobs (sometimes one named twice). */
function heldGroups(p: Pick, m: Live, extra: (id: string) => Record<string, string>, stale?: number): Record<string, string>[] | null {
  const held = m.ids("active");
  if (held.length === 0) return null;
  const ids = p.some(held, 3);
  if (p.chance(0.05)) ids.push(ids[0]!);
  return ids.map((id) => ({ id, token: tokenFor(p, id, stale), ...extra(id) }));
}

/** A flow step's options: mostly none, else a lane, a priority, a name, attempts (wire 16). */
function stepOptions(p: Pick): string {
  const items: string[] = [];
  if (p.chance(0.3)) items.push(`lane=${p.one(LANES)}`);
  if (p.chance(0.3)) items.push(`priority=${p.one(["1", "3"])}`);
  if (p.chance(0.1)) items.push("name=n");
  if (p.chance(0.1)) items.push("attempts=2");
  return items.join("\0");
}

/** A flow's 1–3 children: mostly in its own queue, some in another; every policy; some with options. */
function children(p: Pick, fresh: () => string): Record<string, string>[] {
  return Array.from({ length: 1 + p.int(3) }, () => ({
    id: fresh(),
    queue: p.chance(0.7) ? "@self" : "other",
    policy: p.one(["0", "1", "2", "3"]),
    opts: stepOptions(p),
    body: p.one(["b", "c"]),
  }));
}

const CLAIM_FIXED = (p: Pick) => ({ lease_ms: p.one([LONG, LONG, SHORT]), count: p.one(["1", "2", "3", "5"]), block_ms: "0" });
/**
 * Rates (max, per ms, burst): none, whole ms between tokens, a burst, and 7 a minute (8,571.4 ms
 * apart: a next token rounded up, below a burst and without one).
 */
const RATES: Array<[string, string, string]> = [["0", "1", "1"], ["1", "60000", "1"], ["2", "60000", "3"], ["7", "60000", "2"], ["7", "60000", "1"]];

/** The step an intent makes on the live model: mostly a valid call. */
function resolve(i: Intent, m: Live): Step {
  if ("call" in i) return i.call;
  const p = new Pick(i.r);
  const verb = i.kind as Verb;
  const fresh = (): string => (p.chance(0.03) && m.used > 0 ? m.ids()[0] ?? m.id() : m.id());
  const claim = (): Step => ({ verb: "CLAIM", fixed: CLAIM_FIXED(p), groups: [] });
  const flow = (open: string): Step => ({
    verb: "FLOW",
    fixed: { parent: fresh(), parent_opts: stepOptions(p), payload: "p", open, within_ms: p.one(["0", "0", LONG, SHORT]) },
    groups: children(p, fresh),
  });
  const settle = (extra: (id: string) => Record<string, string>, fixed: Record<string, string> = {}): Step => {
    const groups = heldGroups(p, m, extra);
    return groups ? { verb, fixed, groups } : claim();
  };
  switch (i.kind) {
    case "SLEEP":
      return { verb: "SLEEP" };
    case "ENQUEUE":
      return { verb, fixed: {}, groups: Array.from({ length: 1 + p.int(4) }, () => ({ id: fresh(), opts: options(p), payload: p.one(["p", "q"]) })) };
    case "SCHEDULE":
      return {
        verb,
        fixed: {},
        groups: Array.from({ length: 1 + p.int(3) }, () => ({
          id: fresh(),
          due_ms: p.one(["1000", String(Date.now() + 30), "900000000000000"]),
          opts: options(p),
          payload: "s",
        })),
      };
    case "CLAIM":
      return claim();
    case "ACK":
      return settle(() => ({ result: p.one(["", '{"n":1}']) }));
    case "RETRY":
      return settle(() => ({ delay_ms: p.one(["0", SHORT, LONG]), reason: "boom", failure: "" }));
    case "BURY":
      return settle(() => ({ reason: "dead", failure: "" }));
    case "RELEASE":
      return settle(() => ({}));
    case "EXTEND":
      return settle(() => ({}), { lease_ms: p.one([LONG, SHORT]) });
    case "PROGRESS":
      return settle(() => ({ value: p.one(["1", '{"p":50}']) }));
    case "SETTLE": {
      // every op alike, a stale token more often than the single settles: each op checks its own
      const groups = heldGroups(
        p,
        m,
        () => ({ op: p.one(["0", "1", "2", "3"]), delay_ms: p.one(["0", SHORT, LONG]), reason: "r", result: "x", failure: "" }),
        0.2,
      );
      if (!groups) return claim();
      return { verb, fixed: { lease_ms: p.one([LONG, LONG, SHORT]), want: p.one(["0", "1", "2", "3"]) }, groups };
    }
    case "REMOVE": {
      const ids = m.ids();
      return { verb, fixed: { cleaned: p.one(["0", "1"]) }, groups: (ids.length ? p.some(ids, 2) : [m.id()]).map((id) => ({ id })) };
    }
    case "CANCEL": {
      // any job (waiting, active, finished) or one never seen; sometimes two
      const ids = m.ids();
      return { verb, fixed: { reason: p.one(["cancelled", "cancelled: why"]) }, groups: (ids.length ? p.some(ids, 2) : [m.id()]).map((id) => ({ id })) };
    }
    case "REQUEUE": {
      const dead = m.ids("dead");
      const ids = dead.length && p.chance(0.6) ? p.some(dead, 2) : [];
      return { verb, fixed: { limit: p.one(["1", "2", "1000"]), keep_attempts: p.one(["0", "1"]) }, groups: ids.map((id) => ({ id })) };
    }
    case "RUN": {
      const due = m.ids("scheduled");
      return { verb, fixed: {}, groups: (due.length ? p.some(due, 2) : m.ids().slice(0, 1)).map((id) => ({ id })) };
    }
    case "PROMOTE":
    case "REAP":
      return { verb, fixed: { limit: p.one(["1", "1000"]) }, groups: [] };
    case "PAUSE":
    case "RESUME":
      return { verb, fixed: { lane: p.one(["", "", ...LANES]) }, groups: [] };
    case "LIMIT": {
      const scope = p.one(["0", "1", "1", "2"]);
      const [rate_max, rate_per_ms, rate_burst] = p.one(RATES);
      return {
        verb,
        fixed: { scope, lane: scope === "1" ? p.one(["", ...LANES]) : "", concurrency: p.one(["0", "1", "2", "3"]), rate_max, rate_per_ms, rate_burst },
        groups: [],
      };
    }
    case "PENALIZE": {
      // a lane's park outlasts the run (see "OPEN" below); the queue's may be short
      const lane = p.one(["", ...LANES]);
      return { verb, fixed: { lane, penalty_ms: lane === "" ? p.one([SHORT, LONG]) : LONG }, groups: [] };
    }
    case "RETAIN":
      return {
        verb,
        fixed: {
          dead_max: p.one(["0", "1", "2"]),
          dead_age_ms: p.one(["0", LONG]),
          // 1 kept (each ACK drops the one before), none, a few, the default
          completed_max: p.one(["0", "1", "1", "2", "1000"]),
          completed_age_ms: p.one(["0", LONG]),
          events_max: p.one(["0", "1", "3", "10000"]),
          history_minutes: p.one(["0", "1", "1440", "1440"]),
        },
        groups: [],
      };
    case "SCHEDULER":
      return {
        verb,
        fixed: {
          name: p.one(["s", "t"]),
          spec: p.one(["every 100", "every 200"]),
          next_ms: p.one(["1000", "5000", "900000000000000"]),
          max_missed: p.one(["0", "1", "5"]),
          opts: options(p),
          payload: "tick",
        },
        groups: [],
      };
    case "TICK": {
      if (m.schedulers().length === 0 && p.chance(0.9)) return resolve({ kind: "SCHEDULER", r: i.r }, m);
      const [name, next] = m.schedulers().length ? p.one(m.schedulers()) : ["s", "1000"];
      // its next run (it fires), or one it no longer has: a run already fired, a millisecond off
      const expected = p.chance(0.6) ? next : String(Number(next) - Number(p.one(["100", "200", "1", "-1"])));
      return {
        verb,
        fixed: { name, expected_ms: expected, next_ms: String(Number(expected) + Number(p.one(["100", "100", "1", "0"]))) },
        groups: Array.from({ length: p.chance(0.1) ? 0 : 1 + p.int(2) }, () => ({ id: m.id(), tick_ms: expected })),
      };
    }
    case "UNSCHEDULE":
      return { verb, fixed: { name: p.one(["s", "t"]) }, groups: [] };
    case "FLOW":
      return flow(p.one(["0", "0", "1"]));
    case "ADOPT": {
      const open = m.parents(true);
      if (open.length === 0 || p.chance(0.05)) return flow(p.one(["0", "1", "1"]));
      const [parent, n] = p.one(open);
      return { verb, fixed: { parent, from: String(p.chance(0.9) ? n : n + 1) }, groups: children(p, fresh) };
    }
    case "SEAL": {
      const open = m.parents(true);
      if (open.length === 0 && p.chance(0.7)) return flow("1");
      return { verb, fixed: { parent: open.length ? p.one(open)[0] : p.one([...m.ids(), m.id()]) }, groups: [] };
    }
    case "OUTBOX":
      return { verb, fixed: { lease_ms: p.one([LONG, LONG, SHORT]), count: p.one(["1", "2", "100"]) }, groups: [] };
    case "UNBOX": {
      // entries OUTBOX leased, with their tokens (each twin's own), or a stale one
      const box = m.outbox();
      if (box.length === 0) return { verb: "OUTBOX", fixed: { lease_ms: LONG, count: "100" }, groups: [] };
      return { verb, fixed: {}, groups: p.some(box, 2).map((entry) => ({ entry, deadline: p.chance(0.9) ? `@box:${entry}` : "1000" })) };
    }
    case "APPLY":
    case "TELL": {
      // outcomes of a parent's children in another queue, children of a parent elsewhere (APPLY's
      // only: TELL takes outcomes and cancels), cancels of those
      const entries: string[] = [];
      for (const [parent] of m.parents()) {
        for (const [place, child] of m.away(parent)) {
          entries.push(`done\0@self\0${parent}\0${place}\0${child}\0${p.one(["completed\0r", "failed\0no"])}`);
        }
      }
      const made = m.id();
      const o = stepOptions(p);
      if (verb === "APPLY") entries.push(`child\0@self\0${made}\0other\0JOB00000000001\0${p.int(3)}\0${new TextEncoder().encode(o).length}\0${o}b`);
      // a cancel of a child made here, or of one whose creation has not come yet (a tombstone)
      const adopted = m.ids("pending").filter((id) => m.row(id)?.parent?.startsWith("other"));
      const cancelled = adopted.length && p.chance(0.6) ? p.one(adopted) : m.id();
      entries.push(`cancel\0@self\0${cancelled}\0other\0JOB00000000001\0${p.int(3)}\0`);
      return { verb, fixed: {}, groups: p.some(entries, 3).map((entry) => ({ entry })) };
    }
    case "LOG":
      return settle(() => ({ line: p.one(["step 1", "héllo"]) }));
    case "DROP":
      return { verb, fixed: { limit: p.one(["1000", "2"]) }, groups: [] };
  }
  throw new Error(`no intent ${i.kind}`);
}

/** Whether a call sets something that ends in 30 ms (an expiry no step may straddle). */
function short(c: Call): boolean {
  const args = [c.fixed, ...c.groups];
  return c.verb === "TICK" ||
    args.some((a) => [a.lease_ms, a.delay_ms, a.penalty_ms, a.within_ms].includes(SHORT) || a.opts?.includes(`dedup_ms=${SHORT}`));
}

/** The due times a call sets that fall within a run (an expiry at that absolute time). */
function dues(c: Call): number[] {
  return c.groups.map((g) => Number(g.due_ms)).filter((d) => d > 1e12 && d < 9e14);
}

/**
 * How often a step that spanned a millisecond runs again from the keyspace before it (then every
 * compared step but the rare one spanning each time ran inside one millisecond: times exact).
 */
const RETRIES = 3;

/** How the twins' clocks went: steps compared, those run again, and those whose twins still read different ms. */
const clocks = { steps: 0, retried: 0, spans: 0 };

/**
 * What the random runs reached, per verb: calls, and those that did something (a job claimed, a
 * settle held, a tick fired, an admission or a write not refused); refusals in all.
 */
class Reach {
  private calls = new Map<string, [number, number]>();
  private runs = 0;
  reset(): void {
    this.calls.clear();
    this.runs = 0;
    Object.assign(clocks, { steps: 0, retried: 0, spans: 0 });
  }
  begin(): void {
    this.runs++;
  }
  count(c: Call, o: Outcome): void {
    const ok = "ok" in o ? o.ok : undefined;
    const did = ok === undefined
      ? false
      : c.verb === "CLAIM"
      ? tokensOf(o).length > 0
      : c.verb === "SETTLE"
      ? Array.isArray(ok) && Array.isArray(ok[1]) && (ok[1] as unknown[]).map(Number).includes(1)
      : ["ACK", "RETRY", "BURY", "RELEASE", "EXTEND", "PROGRESS", "LOG", "FLOW", "ADOPT", "SEAL", "APPLY", "TELL", "UNBOX"].includes(c.verb)
      ? Number(ok) > 0
      : c.verb === "TICK"
      ? Number(ok) >= 0
      : c.verb === "OUTBOX"
      ? Array.isArray(ok) && ok.length > 0
      : true;
    const [n, d] = this.calls.get(c.verb) ?? [0, 0];
    this.calls.set(c.verb, [n + 1, d + (did ? 1 : 0)]);
  }
  /** One line: steps per run, and per verb done/called. */
  report(): string {
    let steps = 0;
    for (const [n] of this.calls.values()) steps += n;
    const verbs = [...this.calls.entries()].sort((a, b) => b[1][0] - a[1][0]).map(([v, [n, d]]) => `${v} ${d}/${n}`);
    return `${this.runs} runs, ${(steps / Math.max(1, this.runs)).toFixed(1)} calls a run; done/called: ${verbs.join(", ")}`;
  }
}
const stats = new Reach();

/**
 * Twin runs of `steps` on queues of `stem`: after every step, identical replies and keyspaces
 * (times within the run's largest span so far; exact while every step ran in one millisecond).
 * Each step is a fixed one or an intent resolved on the scripts twin's keyspace.
 */
async function twinRun(raw: Connection, stem: string, steps: Array<Step | Intent>): Promise<void> {
  const queues = twins(stem);
  const route = keyspace(queues.module).meta;
  const held: Record<BackendKind, Held> = { scripts: { seen: [], snap: {}, saved: [] }, module: { seen: [], snap: {}, saved: [] } };
  const windows: Window[] = [];
  // a settle's minute of history (now ÷ 60000) is the twins' own only away from a minute's edge
  const minute = Math.floor(Date.now() / 60_000);
  for (let k = 1; k <= 10; k++) windows.push({ lo: (minute + k) * 60_000, hi: (minute + k) * 60_000 });
  const model = new Live({}, 0);
  stats.begin();
  let tol = 0;
  let m = model;
  await loadScripts(raw, route);
  for (const x of steps) {
    const s: Step = "kind" in x ? resolve(x, m) : x;
    if (s.verb === "SLEEP") {
      await sleep(40);
      continue;
    }
    const label = s.verb;
    if (s.verb === "RAW") {
      for (const backend of ["scripts", "module"] as const) {
        for (const c of s.commands) await raw.command(c.map((a) => a.replaceAll("{Q}", `{${queues[backend]}}`)), route);
      }
    } else {
      const [sv, sk, sa] = call(queues.scripts, s, held.scripts);
      const [mv, mk, ma] = call(queues.module, s, held.module);
      let r: Awaited<ReturnType<typeof twinBatch>>;
      for (let attempt = 0;; attempt++) {
        await clear(windows);
        r = await twinBatch(raw, route, evalsha(sv, sk, sa), wireArgv("module", mv, mk, ma));
        if (r.t1 === r.t0 || attempt === RETRIES) break;
        // the twins may have read different ms: both keyspaces put back as they were, the step again
        clocks.retried++;
        await restore(raw, queues.scripts, held.scripts.saved);
        await restore(raw, queues.module, held.module.saved);
      }
      clocks.steps++;
      if (r.t1 !== r.t0) clocks.spans++;
      stats.count(s, r.scripts);
      // EMQ_DIFF_TRACE=1: each step's call and the scripts twin's reply (with a replayed failure)
      if (process.env.EMQ_DIFF_TRACE) console.log(label, JSON.stringify(sa).slice(0, 400), "→", JSON.stringify(named(r.scripts, queues.scripts)).slice(0, 300));
      tol = Math.max(tol, r.t1 - r.t0);
      if (short(s)) windows.push({ lo: r.t0 + 30, hi: r.t1 + 30 });
      for (const d of dues(s)) windows.push({ lo: d, hi: d });
      held.scripts.seen.push(...tokensOf(r.scripts));
      held.module.seen.push(...tokensOf(r.module));
      // replies name each twin's queue as {Q} (an outbox entry carries it)
      const [rm, rs] = [named(r.module, queues.module), named(r.scripts, queues.scripts)];
      expect({ step: label, call: sa.join(" ").slice(0, 300), module: near(rm, rs, tol) }).toEqual({
        step: label,
        call: sa.join(" ").slice(0, 300),
        module: rs,
      });
    }
    held.scripts.snap = await snapshot(raw, queues.scripts);
    held.module.snap = await snapshot(raw, queues.module);
    held.scripts.saved = await save(raw, queues.scripts, held.scripts.snap);
    held.module.saved = await save(raw, queues.module, held.module.snap);
    const [ms, ss] = [loose(held.module.snap, tol), loose(held.scripts.snap, tol)];
    expect({ after: label, keyspace: near(ms, ss, tol) }).toEqual({ after: label, keyspace: ss });
    m = new Live(held.scripts.snap, m.used);
  }
}

describe.skipIf(!MODULE_WORKS)("differential: scripts vs module on random call sequences", () => {
  const { raws } = useSites();

  test("known differences before the verb runs (docs/WIRE.md): EVALSHA parses numkeys itself", async () => {
    const raw = raws.get("standalone")!;
    const K = keyspace("kd");
    const keys = [K.meta];
    const args = [IDS[0]!, "p"];
    const shape = { err: "ERR wrong number of arguments for 'EMQ.ENQUEUE' command" };
    expect(await wire(raw, "module", "ENQUEUE", keys, args, 9)).toEqual(shape);
    expect(await wire(raw, "scripts", "ENQUEUE", keys, args, 9)).toEqual({
      err: "ERR Number of keys can't be greater than number of args",
    });
    expect(await wire(raw, "module", "ENQUEUE", keys, args, -1)).toEqual(shape);
    expect(await wire(raw, "scripts", "ENQUEUE", keys, args, -1)).toEqual({ err: "ERR Number of keys can't be negative" });
  });

  // sequences the random ones rarely reach (issue 42): a lane's last jobs removed; a per-lane
  // default raised over a lane evicted at its concurrency, or parked at its rate (beside a lane
  // penalized for longer, which stays parked); a lane let back into the empty ring by a settle, a
  // reap or the queue's first lane (`ready` on wake, as every insert into an empty ring writes it);
  // a parked lane let out empty (its idle check); the default lane's backlog when a queue with
  // prioritized jobs becomes laned; a debounce onto a holder scheduled or pending; a hand-edited
  // keyspace: a ready job's row gone under a laned claim, a wake not a sorted set under a laned settle;
  // the queue's park beside its default lane's (PENALIZE's "a longer park in force" is the queue's)
  const jobs = (lane: string, ...ns: number[]): Record<string, string>[] =>
    ns.map((n) => ({ id: `JOB${String(n).padStart(11, "0")}`, opts: lane === "" ? "" : `lane=${lane}`, payload: "p" }));
  const claim1 = { verb: "CLAIM" as const, fixed: { lease_ms: "60000", count: "1", block_ms: "0" }, groups: [] };
  const perLane = (concurrency: string, rate_max: string, rate_per_ms: string) => ({
    verb: "LIMIT" as const,
    fixed: { scope: "2", lane: "", concurrency, rate_max, rate_per_ms, rate_burst: "1" },
    groups: [],
  });
  // a queue laned by a job of lane b, gone
  const laneB: Step[] = [
    { verb: "ENQUEUE", fixed: {}, groups: jobs("b", 9) },
    { verb: "REMOVE", fixed: { cleaned: "0" }, groups: [{ id: "JOB00000000009" }] },
  ];
  const ack0 = { verb: "ACK" as const, fixed: {}, groups: [{ id: "JOB00000000001", token: "#0", result: "" }] };
  const child = (n: number, policy: string) => ({ id: `JOB${String(n).padStart(11, "0")}`, queue: "@self", policy, opts: "", body: `b${n}` });
  const settle1 = (verb: "ACK" | "BURY", n: number, token: string) => ({
    verb,
    fixed: {},
    groups: [{ id: `JOB${String(n).padStart(11, "0")}`, token, ...(verb === "ACK" ? { result: "r" } : { reason: "no", failure: "" }) }],
  });
  // SETTLE's common case (lib/lua/settle_lean.ts): acks of held jobs, each its row's token, and a claim
  const J = (n: number): string => `JOB${String(n).padStart(11, "0")}`;
  const acks = (want: string, ...ns: number[]) => ({
    verb: "SETTLE" as const,
    fixed: { lease_ms: "60000", want },
    groups: ns.map((n, i) => ({ op: "0", id: J(n), token: `@${J(n)}`, delay_ms: "0", reason: "", result: i % 2 ? "r" : "", failure: "" })),
  });
  const retain = (completed_max: string, events_max: string, history_minutes: string) => ({
    verb: "RETAIN" as const,
    fixed: { dead_max: "1", dead_age_ms: "60000", completed_max, completed_age_ms: "60000", events_max, history_minutes },
    groups: [],
  });
  const count = (n: string) => ({ ...claim1, fixed: { ...claim1.fixed, count: n } });
  const LEAN: Record<string, Step[]> = {
    "SETTLE's common case: acks and claims on a plain queue until it is empty": [
      { verb: "ENQUEUE", fixed: {}, groups: jobs("", 1, 2, 3, 4, 5, 6) },
      count("2"),
      acks("3", 1, 2),
      acks("3", 3, 4, 5),
      acks("2", 6),
    ],
    "SETTLE's common case under a small retention, without events or history": [
      retain("2", "0", "0"),
      { verb: "ENQUEUE", fixed: {}, groups: jobs("", 1, 2, 3, 4, 5, 6, 7, 8, 9) },
      count("3"),
      acks("3", 1, 2, 3),
      acks("1", 4, 5, 6),
      acks("3", 7),
      settle1("BURY", 8, "@JOB00000000008"),
      acks("3", 9),
    ],
    "SETTLE's common case on a queue that keeps no completed job": [
      retain("0", "3", "5"),
      { verb: "ENQUEUE", fixed: {}, groups: jobs("", 1, 2, 3, 4) },
      count("2"),
      acks("2", 1, 2),
      acks("0", 3, 4),
    ],
    "SETTLE's common case gives way: a stale token, a repeated id, a retry": [
      { verb: "ENQUEUE", fixed: {}, groups: jobs("", 1, 2, 3, 4, 5) },
      count("3"),
      { ...acks("1", 1, 2), groups: [acks("1", 1).groups[0]!, { ...acks("1", 2).groups[0]!, token: "@~JOB00000000002" }] },
      { ...acks("1", 1, 1), groups: [acks("1", 1).groups[0]!, acks("1", 1).groups[0]!] },
      { ...acks("1", 2, 3), groups: [acks("1", 2).groups[0]!, { ...acks("1", 3).groups[0]!, op: "1" }] },
    ],
    "SETTLE's common case acks, then its claim gives way: a due job, an expired lease": [
      { verb: "ENQUEUE", fixed: {}, groups: jobs("", 1, 2, 3, 4) },
      count("2"),
      {
        verb: "SETTLE",
        fixed: { lease_ms: "60000", want: "0" },
        groups: [{ op: "1", id: J(1), token: `@${J(1)}`, delay_ms: "030", reason: "r", result: "", failure: "" }],
      },
      { verb: "CLAIM", fixed: { lease_ms: "030", count: "1", block_ms: "0" }, groups: [] },
      { verb: "SLEEP" },
      acks("3", 2),
    ],
    "SETTLE's common case acks, then its claim gives way: a hand-edited wake, a ready row gone": [
      { verb: "ENQUEUE", fixed: {}, groups: jobs("", 1, 2, 3, 4, 5) },
      count("2"),
      { verb: "RAW", commands: [["SET", "emq:{Q}:wake", "x"]] },
      acks("1", 1),
      { verb: "RAW", commands: [["DEL", "emq:{Q}:wake"], ["DEL", "emq:{Q}:job:JOB00000000004"]] },
      acks("2", 2),
    ],
    "SETTLE's common case beside a job scheduled later, its next_ms from the heads it read": [
      { verb: "ENQUEUE", fixed: {}, groups: jobs("", 1, 2, 3, 4) },
      count("2"),
      {
        verb: "SETTLE",
        fixed: { lease_ms: "60000", want: "0" },
        groups: [{ op: "1", id: J(1), token: `@${J(1)}`, delay_ms: "60000", reason: "r", result: "", failure: "" }],
      },
      acks("1", 2),
      acks("0", 3),
    ],
    "SETTLE's common case claims an id that is also active's head (a hand-edited keyspace)": [
      { verb: "ENQUEUE", fixed: {}, groups: jobs("", 1, 2, 3) },
      { ...claim1, fixed: { ...claim1.fixed, lease_ms: "9999999999999" } },
      { verb: "RAW", commands: [["ZADD", "emq:{Q}:active", "4102444800000", J(3)]] },
      // (its lease ends after the head's old score: active's head after the claim is the deadline; under 10^15 ms, so that
      // a step that spanned a millisecond at every try compares its deadlines as ms, not as tokens)
      { ...acks("2", 1), fixed: { lease_ms: "9999999999999", want: "2" } },
    ],
    "SETTLE's common case gives way to priorities and a paused queue": [
      { verb: "ENQUEUE", fixed: {}, groups: [...jobs("", 1, 2), { id: J(3), opts: "priority=2", payload: "p" }] },
      count("1"),
      acks("3", 1),
      { verb: "PAUSE", fixed: { lane: "" }, groups: [] },
      acks("1", 2),
    ],
  };
  const KNOWN: Record<string, Step[]> = {
    "a flow in its own queue: ignore, then fail": [
      { verb: "FLOW", fixed: { parent_opts: "", parent: "JOB00000000001", payload: "p", open: "0", within_ms: "0" }, groups: [child(2, "0"), child(3, "1")] },
      {
        verb: "FLOW",
        fixed: { parent_opts: "", parent: "JOB00000000005", payload: "p", open: "0", within_ms: "0" },
        groups: [child(6, "0"), { ...child(7, "0"), queue: "other" }],
      },
      { ...claim1, fixed: { ...claim1.fixed, count: "3" } },
      settle1("ACK", 2, "#0"),
      settle1("BURY", 3, "#1"),
      settle1("BURY", 6, "#2"),
      claim1,
    ],
    "a nested flow: a node applied here, its child fails it, which fails its parent; a waiting node cancelled": [
      {
        verb: "FLOW",
        fixed: { parent_opts: "", parent: "JOB00000000001", payload: "p", open: "0", within_ms: "0" },
        groups: [{ id: "JOB00000000002", queue: "@self", policy: "4", opts: "", body: "1\x001\x00mJOB00000000003\0@self\x000\x000\x001\x00g" }],
      },
      {
        verb: "APPLY",
        fixed: {},
        groups: [{ entry: "node\0@self\0JOB00000000002\0@self\0JOB00000000001\x000\x000\x001\x001\x00mJOB00000000003\0@self\x000\x000\x001\x00g" }],
      },
      claim1,
      settle1("BURY", 3, "@JOB00000000003"),
      {
        verb: "FLOW",
        fixed: { parent_opts: "", parent: "JOB00000000005", payload: "p", open: "0", within_ms: "0" },
        groups: [child(6, "0"), { id: "JOB00000000007", queue: "@self", policy: "4", opts: "", body: "1\x001\x00mJOB00000000008\0@self\x000\x000\x001\x00g" }],
      },
      {
        verb: "APPLY",
        fixed: {},
        groups: [{ entry: "node\0@self\0JOB00000000007\0@self\0JOB00000000005\x001\x000\x001\x001\x00mJOB00000000008\0@self\x000\x000\x001\x00g" }],
      },
      { ...claim1, fixed: { ...claim1.fixed, count: "2" } },
      settle1("BURY", 6, "@JOB00000000006"),
      claim1,
    ],
    "an open fan-in: adopt, finish, seal; a removed parent cancels its unstarted child": [
      { verb: "FLOW", fixed: { parent_opts: "", parent: "JOB00000000001", payload: "p", open: "1", within_ms: "0" }, groups: [child(2, "3")] },
      { verb: "ADOPT", fixed: { parent: "JOB00000000001", from: "1" }, groups: [child(3, "1"), { ...child(4, "0"), queue: "other" }] },
      { verb: "ADOPT", fixed: { parent: "JOB00000000001", from: "1" }, groups: [child(5, "1")] },
      { ...claim1, fixed: { ...claim1.fixed, count: "2" } },
      settle1("ACK", 2, "#0"),
      settle1("ACK", 3, "#1"),
      { verb: "SEAL", fixed: { parent: "JOB00000000001" }, groups: [] },
      { verb: "ADOPT", fixed: { parent: "JOB00000000001", from: "3" }, groups: [child(5, "1")] },
      {
        verb: "FLOW",
        fixed: { parent_opts: "", parent: "JOB00000000006", payload: "p", open: "0", within_ms: "0" },
        groups: [child(7, "0"), { ...child(8, "0"), queue: "other" }],
      },
      { verb: "REMOVE", fixed: { cleaned: "0" }, groups: [{ id: "JOB00000000006" }] },
      { verb: "SEAL", fixed: { parent: "JOB00000000006" }, groups: [] },
    ],
    "cancel and flows: a cancelled child tells its parent under its policy; a waiting parent cancelled cancels its children": [
      {
        verb: "FLOW",
        fixed: { parent_opts: "", parent: "JOB00000000001", payload: "p", open: "0", within_ms: "0" },
        groups: [child(2, "1"), child(3, "3"), { ...child(4, "0"), queue: "other" }],
      },
      claim1,
      { verb: "CANCEL", fixed: { reason: "cancelled" }, groups: [{ id: "JOB00000000002" }, { id: "JOB00000000003" }] },
      {
        verb: "FLOW",
        fixed: { parent_opts: "", parent: "JOB00000000006", payload: "p", open: "0", within_ms: "0" },
        groups: [child(7, "0"), { ...child(8, "0"), queue: "other" }, child(9, "2")],
      },
      { verb: "CANCEL", fixed: { reason: "cancelled: x" }, groups: [{ id: "JOB00000000009" }] },
      { verb: "CANCEL", fixed: { reason: "cancelled" }, groups: [{ id: "JOB00000000006" }] },
      { verb: "FLOW", fixed: { parent_opts: "", parent: "JOB00000000010", payload: "p", open: "0", within_ms: "0" }, groups: [child(11, "0"), child(12, "0")] },
      { verb: "CANCEL", fixed: { reason: "cancelled" }, groups: [{ id: "JOB00000000011" }, { id: "JOB00000000010" }] },
      claim1,
    ],
    "remove a lane's last jobs": [
      { verb: "ENQUEUE", fixed: {}, groups: jobs("a", 1, 2) },
      { verb: "ENQUEUE", fixed: {}, groups: jobs("b", 3) },
      { verb: "REMOVE", fixed: { cleaned: "0" }, groups: [{ id: "JOB00000000001" }, { id: "JOB00000000002" }] },
      { verb: "REMOVE", fixed: { cleaned: "0" }, groups: [{ id: "JOB00000000003" }] },
    ],
    "cancel a lane's jobs, waiting and running, at its concurrency": [
      perLane("1", "0", "1"),
      { verb: "LIMIT", fixed: { scope: "0", lane: "", concurrency: "2", rate_max: "0", rate_per_ms: "1", rate_burst: "1" }, groups: [] },
      { verb: "ENQUEUE", fixed: {}, groups: jobs("a", 1, 2) },
      { verb: "ENQUEUE", fixed: {}, groups: [...jobs("b", 3), { id: "JOB00000000004", opts: "lane=b\0priority=3", payload: "p" }] },
      { verb: "ENQUEUE", fixed: {}, groups: jobs("", 5) },
      { ...claim1, fixed: { ...claim1.fixed, count: "2" } },
      { verb: "CANCEL", fixed: { reason: "cancelled" }, groups: [{ id: "JOB00000000001" }, { id: "JOB00000000004" }] },
      { verb: "CANCEL", fixed: { reason: "cancelled: x" }, groups: [{ id: "JOB00000000003" }, { id: "JOB00000000002" }, { id: "JOB00000000009" }] },
      { verb: "EXTEND", fixed: { lease_ms: "60000" }, groups: [{ id: "JOB00000000001", token: "#0" }] },
      claim1,
      { verb: "CANCEL", fixed: { reason: "cancelled" }, groups: [{ id: "JOB00000000005" }, { id: "JOB00000000001" }] },
      claim1,
    ],
    "raise the per-lane concurrency": [
      perLane("1", "0", "1"),
      { verb: "ENQUEUE", fixed: {}, groups: jobs("a", 1, 2) },
      { verb: "ENQUEUE", fixed: {}, groups: jobs("b", 3) },
      claim1,
      claim1,
      claim1,
      perLane("5", "0", "1"),
      claim1,
    ],
    "raise the per-lane rate": [
      perLane("0", "1", "60000"),
      { verb: "ENQUEUE", fixed: {}, groups: jobs("a", 1, 2) },
      { verb: "ENQUEUE", fixed: {}, groups: jobs("b", 3, 4) },
      claim1,
      claim1,
      { verb: "PENALIZE", fixed: { lane: "b", penalty_ms: "86400000" }, groups: [] },
      claim1,
      perLane("0", "100", "1000"),
      claim1,
      claim1,
    ],
    "an ack frees a lane into the empty ring": [perLane("1", "0", "1"), { verb: "ENQUEUE", fixed: {}, groups: jobs("a", 1, 2) }, claim1, ack0],
    "a settle frees a lane into the empty ring": [
      perLane("1", "0", "1"),
      { verb: "ENQUEUE", fixed: {}, groups: jobs("a", 1, 2) },
      claim1,
      {
        verb: "SETTLE",
        fixed: { lease_ms: "60000", want: "0" },
        groups: [{ op: "2", id: "JOB00000000001", token: "#0", delay_ms: "0", reason: "r", result: "" }],
      },
    ],
    "a reap frees a lane into the empty ring": [
      perLane("1", "0", "1"),
      { verb: "ENQUEUE", fixed: {}, groups: jobs("a", 1, 2) },
      { verb: "CLAIM", fixed: { lease_ms: "030", count: "1", block_ms: "0" }, groups: [] },
      { verb: "SLEEP" },
      { verb: "REAP", fixed: { limit: "1000" }, groups: [] },
    ],
    "the first lane of a queue at its concurrency": [
      { verb: "LIMIT", fixed: { scope: "0", lane: "", concurrency: "1", rate_max: "0", rate_per_ms: "1", rate_burst: "1" }, groups: [] },
      { verb: "ENQUEUE", fixed: {}, groups: jobs("", 1, 2) },
      claim1,
      { verb: "ENQUEUE", fixed: {}, groups: jobs("a", 3) },
    ],
    "a claim lets out a parked lane with nothing in it": [
      { verb: "ENQUEUE", fixed: {}, groups: jobs("a", 1) },
      { verb: "PENALIZE", fixed: { lane: "c", penalty_ms: "030" }, groups: [] },
      { verb: "SLEEP" },
      claim1,
    ],
    "a queue with prioritized jobs takes its first lane": [
      {
        verb: "ENQUEUE",
        fixed: {},
        groups: [
          { id: "JOB00000000001", opts: "priority=2", payload: "p" },
          { id: "JOB00000000002", opts: "", payload: "p" },
          { id: "JOB00000000003", opts: "priority=1", payload: "p" },
        ],
      },
      { verb: "ENQUEUE", fixed: {}, groups: jobs("a", 4) },
      claim1,
    ],
    "a debounced admission onto a waiting holder of the other kind": [
      { verb: "SCHEDULE", fixed: {}, groups: [{ id: "JOB00000000001", due_ms: "900000000000000", opts: "dedup=k\0debounce=1", payload: "a" }] },
      { verb: "ENQUEUE", fixed: {}, groups: [{ id: "JOB00000000002", opts: "dedup=k\0debounce=1", payload: "b" }] },
      { verb: "ENQUEUE", fixed: {}, groups: [{ id: "JOB00000000003", opts: "dedup=j\0debounce=1", payload: "c" }] },
      { verb: "SCHEDULE", fixed: {}, groups: [{ id: "JOB00000000004", due_ms: "900000000000000", opts: "dedup=j\0debounce=1", payload: "d" }] },
    ],
    "a laned claim takes back expired leases": [
      { verb: "ENQUEUE", fixed: {}, groups: [...jobs("a", 1, 2), ...jobs("b", 3)] },
      { verb: "CLAIM", fixed: { lease_ms: "030", count: "2", block_ms: "0" }, groups: [] },
      { verb: "SLEEP" },
      { verb: "CLAIM", fixed: { lease_ms: "60000", count: "3", block_ms: "0" }, groups: [] },
    ],
    // (found by a random run: the Lua twin put the lane back in the ring only with the expired
    // jobs, after the other lane, where its walk had served it with the due ones first)
    "a laned claim meets a due job and an expired one of a lane at its limit": [
      perLane("1", "0", "1"),
      { verb: "ENQUEUE", fixed: {}, groups: [...jobs("b", 1), ...jobs("", 2)] },
      { verb: "CLAIM", fixed: { lease_ms: "030", count: "2", block_ms: "0" }, groups: [] },
      { verb: "SCHEDULE", fixed: {}, groups: [{ id: "JOB00000000003", due_ms: "1000", opts: "", payload: "d" }] },
      { verb: "SLEEP" },
      claim1,
    ],
    // flow steps with options (wire 16): the queue laned by a parent's lane alone; children laned and
    // prioritized here, elsewhere, in entries and subtrees; a laned child removed, one cancelled; the
    // parent woken into its lane at its priority
    "a flow whose parent alone has a lane": [
      { verb: "ENQUEUE", fixed: {}, groups: jobs("", 7) },
      {
        verb: "FLOW",
        fixed: { parent_opts: "lane=b\0priority=2", parent: "JOB00000000001", payload: "p", open: "0", within_ms: "0" },
        groups: [child(2, "1"), child(3, "1")],
      },
      { ...claim1, fixed: { ...claim1.fixed, count: "3" } },
      settle1("ACK", 2, "@JOB00000000002"),
      settle1("ACK", 3, "@JOB00000000003"),
      claim1,
    ],
    "a flow of steps with lanes and priorities": [
      {
        verb: "FLOW",
        fixed: { parent_opts: "lane=b\0priority=2\0name=p", parent: "JOB00000000001", payload: "p", open: "0", within_ms: "0" },
        groups: [
          { ...child(2, "1"), opts: "lane=a" },
          { ...child(3, "1"), opts: "priority=3\0attempts=2" },
          { ...child(4, "3"), opts: "lane=a\0priority=1" },
          { ...child(5, "1"), queue: "other", opts: "lane=a" },
        ],
      },
      { verb: "REMOVE", fixed: { cleaned: "0" }, groups: [{ id: "JOB00000000004" }] },
      { verb: "APPLY", fixed: {}, groups: [{ entry: "child\0@self\0JOB00000000009\0other\0JOB00000000008\x000\x006\0lane=cb" }] },
      {
        verb: "APPLY",
        fixed: {},
        groups: [{
          entry: "node\0@self\0JOB00000000010\0other\0JOB00000000008\x001\x0010\0priority=21\x001\x00mJOB00000000011\0@self\x000\x006\0lane=d1\x00g",
        }],
      },
      { verb: "APPLY", fixed: {}, groups: [{ entry: "cancel\0@self\0JOB00000000009\0other\0JOB00000000008\x000\0" }] },
      { ...claim1, fixed: { ...claim1.fixed, count: "2" } },
      settle1("ACK", 2, "@JOB00000000002"),
      settle1("ACK", 3, "@JOB00000000003"),
      { verb: "APPLY", fixed: {}, groups: [{ entry: "done\0@self\0JOB00000000001\x003\0JOB00000000005\0completed\0r" }] },
      { ...claim1, fixed: { ...claim1.fixed, count: "3" } },
    ],
    // (found by a random run, EMQ_DIFF_SEED=-75213300: the module's CANCEL took `ready` off `wake`
    // through the handle it opened before `wake` existed, which the woken parent had since made, so
    // the marker stayed; REMOVE the same)
    "a cancelled child wakes its parent in a laned queue whose default lane is at its limit": [
      perLane("1", "0", "1"),
      { verb: "FLOW", fixed: { parent_opts: "", parent: "JOB00000000001", payload: "p", open: "0", within_ms: "0" }, groups: [child(2, "3"), child(3, "3")] },
      ...laneB,
      { verb: "PAUSE", fixed: { lane: "b" }, groups: [] },
      claim1,
      { verb: "CANCEL", fixed: { reason: "cancelled" }, groups: [{ id: "JOB00000000003" }] },
      claim1,
    ],
    "a removed child wakes its parent in a laned queue whose default lane is at its limit": [
      perLane("1", "0", "1"),
      ...laneB,
      { verb: "ENQUEUE", fixed: {}, groups: jobs("", 4) },
      claim1,
      { verb: "FLOW", fixed: { parent_opts: "", parent: "JOB00000000001", payload: "p", open: "0", within_ms: "0" }, groups: [child(2, "0")] },
      claim1,
      { verb: "REMOVE", fixed: { cleaned: "0" }, groups: [{ id: "JOB00000000002" }] },
      claim1,
    ],
    "an outbox child applied over a wake that is not a sorted set": [
      { verb: "RAW", commands: [["SET", "emq:{Q}:wake", "x"]] },
      { verb: "APPLY", fixed: {}, groups: [{ entry: "child\0@self\0JOB00000000001\0other\0JOB00000000009\x000\x000\0b" }] },
      { verb: "RAW", commands: [["DEL", "emq:{Q}:wake"]] },
      { verb: "APPLY", fixed: {}, groups: [{ entry: "child\0@self\0JOB00000000001\0other\0JOB00000000009\x000\x000\0b" }] },
    ],
    "an admission onto a hand-edited dedup entry": [
      { verb: "RAW", commands: [["HSET", "emq:{Q}:dedup", "k", "garbage", "j", "JOB00000000009 99999999999999999"]] },
      {
        verb: "ENQUEUE",
        fixed: {},
        groups: [{ id: "JOB00000000001", opts: "dedup=k", payload: "p" }, { id: "JOB00000000002", opts: "dedup=j", payload: "p" }],
      },
    ],
    "a laned claim meets a ready id whose row is gone": [
      { verb: "ENQUEUE", fixed: {}, groups: jobs("a", 1, 2) },
      { verb: "RAW", commands: [["DEL", "emq:{Q}:job:JOB00000000001"]] },
      claim1,
      claim1,
    ],
    "a resumed lane fills the empty ring": [
      { verb: "ENQUEUE", fixed: {}, groups: jobs("b", 1) },
      { verb: "PAUSE", fixed: { lane: "b" }, groups: [] },
      claim1,
      { verb: "RESUME", fixed: { lane: "b" }, groups: [] },
    ],
    "a queue penalized while its default lane is parked": [
      perLane("0", "1", "60000"),
      { verb: "ENQUEUE", fixed: {}, groups: [...jobs("", 1, 2), ...jobs("a", 3)] },
      claim1,
      claim1,
      claim1,
      { verb: "PENALIZE", fixed: { lane: "", penalty_ms: "030" }, groups: [] },
    ],
    "a laned ack over a wake that is not a sorted set": [
      { verb: "ENQUEUE", fixed: {}, groups: jobs("a", 1, 2) },
      claim1,
      { verb: "RAW", commands: [["DEL", "emq:{Q}:wake"], ["SET", "emq:{Q}:wake", "x"]] },
      ack0,
      { verb: "RAW", commands: [["DEL", "emq:{Q}:wake"]] },
      ack0,
    ],
  };
  // OPEN (found by this test, not fixed yet): a claim of a laned queue that is paused (or parked)
  // while a lane's park has ended — the module's walk still runs (room 0) and lets the lane out of
  // `parked`, answering next_ms 0; the Lua twin walks nothing, keeps the lane in `parked` and
  // answers the ended park as next_ms. Which side is right is for docs/design/lanes.md to say.
  test.failing("OPEN: a paused laned queue whose lane's park has ended: identical replies and keyspaces", async () => {
    await twinRun(raws.get("standalone")!, "k-open-paused-park", [
      { verb: "ENQUEUE", fixed: {}, groups: jobs("b", 1) },
      { verb: "PAUSE", fixed: { lane: "" }, groups: [] },
      { verb: "PENALIZE", fixed: { lane: "a", penalty_ms: "030" }, groups: [] },
      { verb: "SLEEP" },
      claim1,
    ]);
  });

  for (const [name, steps] of Object.entries({ ...KNOWN, ...LEAN })) {
    test(`known sequence, ${name}: identical replies and keyspaces`, async () => {
      for (const topology of TOPOLOGIES) await twinRun(raws.get(topology)!, `k-${name.replaceAll(" ", "-").replaceAll("'", "")}`, steps);
    });
  }

  for (const topology of TOPOLOGIES) {
    test(`${topology}: identical replies and keyspaces, every step`, async () => {
      const raw = raws.get(topology)!;
      let run = 0;
      let failed = 0;
      stats.reset();
      await fc.assert(
        fc.asyncProperty(opening, fc.array(intent, { minLength: 10, maxLength: 40 }), async (open, steps) => {
          // shrinking stops 2 minutes after the first failure (every later candidate passes), with
          // the smallest failing run found by then; the runs before a failure are never cut short
          // (a time limit of fast-check's own would end a slow machine's runs as a failure)
          if (failed > 0 && Date.now() - failed > 120_000) return;
          try {
            await twinRun(raw, `d${run++}`, [...open, ...steps]);
          } catch (e) {
            failed ||= Date.now();
            throw e;
          }
        }),
        // no shrinking with EMQ_DIFF_SHRINK=0: a mutation campaign needs the verdict, not the smallest run
        // EMQ_DIFF_SEED and EMQ_DIFF_PATH replay a failure's run (fast-check prints both); see SEED
        {
          numRuns: RUNS,
          endOnFailure: process.env.EMQ_DIFF_SHRINK === "0",
          ...(SEED === undefined ? {} : { seed: SEED, ...(process.env.EMQ_DIFF_PATH ? { path: process.env.EMQ_DIFF_PATH } : {}) }),
        },
      );
      console.log(`differential ${topology}: ${clocks.steps} steps, ${clocks.retried} run again, ${clocks.spans} compared across a millisecond`);
      console.log(`differential ${topology}: ${stats.report()}`);
    });
  }
});
