/**
 * Hostile input: 200k random and mutated argument vectors (a seeded generator: valid calls with
 * flipped / inserted / deleted bytes, keys swapped between queues or positions, braces and NUL in
 * names, empty elements, wrong numkeys, bad numbers, bad ids, dropped / extra arguments, wrong
 * verbs, garbage keys, a few payloads over 1 MiB) go through the host's keyspace checks
 * (`splitQueueKey`, `Keyspace.fromKey`, `validQueue`) and as raw `EMQ.*` calls to a standalone
 * server with the module. For every call the host mirror predicts the module's step (unknown
 * command, shape, layout, a gate with its exact text, or "runs"), and they must agree: a layout
 * refusal iff the host mirror refuses the keys. Calls go in non-atomic batches with `DEBUG DIGEST`
 * between every two, and every refusal leaves the digest unchanged. The server survives.
 *
 * Keys and arguments are handled as binary strings (one char per byte, sent as latin1), so the host
 * checks see exactly the server's bytes; keys that are valid UTF-8 are also checked as decoded
 * text, and must get the same verdict.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Batch, Decoder, type GlideClient, type GlideReturnType } from "@valkey/valkey-glide";
import { Buffer } from "node:buffer";
import { EchoMQ, EchoMQError, WireError } from "../../client.ts";
import { serverText } from "../../lib/client/errors.ts";
import { Keyspace, splitQueueKey, validQueue } from "../../mod.ts";
import { type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { call, digest, expectOk, expectRefused, jobId, requireModule, standalone } from "../native/_native.ts";
import {
  ARGS,
  type ArgName,
  type Gate,
  type KeyRole,
  keyOf,
  renderRefusal,
  type Verb,
  VERB_NAMES,
  VERBS as WIRE_VERBS,
} from "../../lib/wire/mod.ts";

const SEED = 0x5eed_2026;
const CASES = 200_000;
const BATCH = 125; // calls per batch; the keyspace is reset (FLUSHALL) and re-seeded before each
const MAX_PAYLOAD = 1_048_576;
const OVERSIZED_AT = new Set([1_234, 77_777, 150_001, 199_998]); // cases that carry a > 1 MiB payload

let server: ServerHandle;
let client: GlideClient;

beforeAll(async () => {
  server = await startServer({ module: requireModule(), args: ["--enable-debug-command", "yes"] });
  client = await standalone(server.port);
}, 60_000);

afterAll(async () => {
  client?.close();
  await server?.stop();
});

// ---------------------------------------------------------------------------------------------
// Byte strings and a seeded generator

/** A binary string: one char per byte. */
type Bin = string;
const bin = (s: string): Bin => Buffer.from(s, "utf8").toString("latin1");
const wire = (b: Bin): Buffer => Buffer.from(b, "latin1");

/** mulberry32: small, fast, seeded. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(SEED);
const int = (n: number): number => Math.floor(random() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
const bytes = (n: number): Bin => {
  let s = "";
  for (let i = 0; i < n; i++) s += String.fromCharCode(int(256));
  return s;
};

// ---------------------------------------------------------------------------------------------
// The verbs, and the host's prediction of what the module does with an argument vector

type ArgType = ArgName;
/** The spec: keys by role, arguments by name (lib/wire). */
const SPEC = WIRE_VERBS;
const VERBS = VERB_NAMES;

/** What the module must do with a call, as the host predicts it. */
type Prediction =
  | { kind: "unknown" }
  | { kind: "shape" }
  | { kind: "layout" }
  | { kind: "gate"; text: string }
  | { kind: "runs" };

const ASCII_UPPER = (s: string): string => s.replace(/[a-z]/g, (c) => c.toUpperCase());
const digits = (s: Bin): number | null => (/^[0-9]{1,15}$/.test(s) ? Number(s) : null);

/** The host mirror's verdict on a call's keys: the queue's keyspace, or null (a layout refusal). */
function hostLayout(verb: Verb, keys: Bin[], args: Bin[]): Keyspace | null {
  const spec = SPEC[verb];
  const roles: readonly KeyRole[] = spec.keys;
  const id = spec.args[0] === "id" ? args[0]! : "";
  const first = roles[0]!;
  const firstType = first === "row" ? `job:${id}` : first === "base" ? "" : first;
  const ks = Keyspace.fromKey(keys[0]!, firstType);
  if (ks === null) return null;
  for (let i = 1; i < spec.keys.length; i++) if (keys[i] !== keyOf(ks, spec.keys[i]!, id)) return null;
  return ks;
}

function predict(argv: Bin[]): Prediction {
  const name = ASCII_UPPER(argv[0] ?? "");
  const verb = name.startsWith("EMQ.") ? (name.slice(4) as Verb) : null;
  if (verb === null || !(verb in SPEC)) return { kind: "unknown" };
  const spec = SPEC[verb];
  const nk = spec.keys.length;
  if (argv.length < 2 || argv[1] !== String(nk) || argv.length !== 2 + nk + spec.args.length) return { kind: "shape" };
  const keys = argv.slice(2, 2 + nk);
  const args = argv.slice(2 + nk);
  if (hostLayout(verb, keys, args) === null) return { kind: "layout" };
  const V = `EMQ.${verb}`;
  for (let i = 0; i < spec.args.length; i++) {
    const a = args[i]!;
    const name: ArgName = spec.args[i]!;
    const gate: Gate = ARGS[name].gate;
    if (gate.kind === "job-id" && !a.startsWith("JOB")) return { kind: "gate", text: renderRefusal("job-id", V, {}) };
    if (gate.kind === "number") {
      const n = digits(a);
      if (n === null || n < gate.min) {
        return { kind: "gate", text: renderRefusal(gate.min === 0 ? "non-negative" : "positive", V, { arg: name }) };
      }
    }
    if (gate.kind === "bytes" && a.length > gate.limit) {
      return { kind: "gate", text: renderRefusal(gate.refusal, V, { limit: String(gate.limit) }) };
    }
  }
  return { kind: "runs" };
}

/** Refusals a call that passed every gate may still get, from the state it meets (step 5). */
function domainRefusal(verb: string, text: string): boolean {
  return text === `ERR EMQ.${verb} duplicate id` || text === `ERR EMQ.${verb} job is not active` ||
    text.startsWith("WRONGTYPE ") || text === "ERR hash value is not an integer";
}

// ---------------------------------------------------------------------------------------------
// Valid calls and their mutations

const NAMES: Bin[] = ["a", "b", "orders", "x:y", bin("ü-queue"), bin("队列"), "n".repeat(60), "sp ace", "\x7f\xff"];
const HOSTILE_NAMES: Bin[] = ["", "a}b", "{a", "a{b}c", "a\0b", "}", "{", "{}", "emq:{a}", "\0"];
const IDS: Bin[] = Array.from({ length: 24 }, (_, i) => jobId(i + 1));
const SPECIAL = ["{", "}", "\0", ":", "0", "-", " ", "\xff", "\x80", "J", "9"];
const BAD_NUMKEYS = ["999999999", "0", "-1", "-2", "1", "2", "3", "4", "02", " 2", "2 ", "abc", "", "99999999999999999999", "+2", "1e1", "\xd9\xa2"];
const BAD_NUMBERS = ["-5", "-1", "0", "abc", "1e3", "1234567890123456", "", " 5", "5 ", "+5", "007", "999999999999999", "0x10", "5.5", "18446744073709551616", "\xd9\xa1", "00", "1"];
const BAD_IDS = ["job00000000001", "", "JOB", "JO", "XJOB0000000001", "JOB\0", "JOB}", `${jobId(1)}x`, "J", "\0JOB"];
const WRONG_VERBS = ["EMQ.ENQUEUEX", "EMQ.FOO", "EMQ", "EMQ.", "EMQ.ACK ", "EMQ.ACK\0", "EMQ.ACK|x", "QME.CLAIM", "EMQ.CLAIMS", "emq.reapx"];
const CASINGS = (v: string): string[] => [`EMQ.${v}`, `emq.${v.toLowerCase()}`, `Emq.${v[0]}${v.slice(1).toLowerCase()}`];

function number(type: ArgType): Bin {
  switch (type) {
    case "due_ms":
      return String(random() < 0.7 ? int(1000) : Date.now() + 60_000);
    case "lease_ms":
      return String(1 + int(60_000));
    case "delay_ms":
      return String(1 + int(50));
    case "limit":
      return String(1 + int(100));
    default:
      return "1";
  }
}

function validCall(): Bin[] {
  const verb = pick(VERBS);
  const spec = SPEC[verb];
  const ks = new Keyspace(pick(NAMES));
  const id = pick(IDS);
  const argv = [random() < 0.8 ? `EMQ.${verb}` : pick(CASINGS(verb)), String(spec.keys.length)];
  for (const k of spec.keys) argv.push(keyOf(ks, k, id));
  for (const a of spec.args) {
    if (a === "id") argv.push(id);
    else if (a === "payload") argv.push(bytes(int(48)));
    else if (a === "reason") argv.push(random() < 0.02 ? "r".repeat(4096 + int(2)) : bytes(int(16)));
    else argv.push(number(a));
  }
  return argv;
}

/** Positions of the keys and of each argument type, for the verb the call was built as. */
function layoutOf(argv: Bin[]): { verb: Verb; keys: number[]; args: Map<ArgType, number> } | null {
  const name = ASCII_UPPER(argv[0] ?? "");
  const verb = name.slice(4) as Verb;
  if (!name.startsWith("EMQ.") || !(verb in SPEC)) return null;
  const spec = SPEC[verb];
  const keys = spec.keys.map((_, i) => 2 + i).filter((i) => i < argv.length);
  const args = new Map<ArgType, number>();
  spec.args.forEach((a, i) => {
    if (2 + spec.keys.length + i < argv.length) args.set(a, 2 + spec.keys.length + i);
  });
  return { verb, keys, args };
}

function renameQueue(key: Bin, name: Bin): Bin {
  const open = key.indexOf("{");
  const close = key.indexOf("}", open + 1);
  if (open < 0 || close < 0) return key;
  return key.slice(0, open + 1) + name + key.slice(close);
}

function mutate(argv: Bin[]): void {
  const at = (): number => 1 + int(Math.max(1, argv.length - 1));
  const shape = layoutOf(argv);
  switch (int(14)) {
    case 0: { // flip or replace one byte
      const i = at();
      const s = argv[i] ?? "";
      if (s.length === 0) break;
      const p = int(s.length);
      const c = random() < 0.5 ? String.fromCharCode(s.charCodeAt(p) ^ (1 << int(8))) : pick(SPECIAL);
      argv[i] = s.slice(0, p) + c + s.slice(p + 1);
      break;
    }
    case 1: { // insert a byte
      const i = at();
      const s = argv[i] ?? "";
      const p = int(s.length + 1);
      argv[i] = s.slice(0, p) + (random() < 0.5 ? pick(SPECIAL) : bytes(1)) + s.slice(p);
      break;
    }
    case 2: { // delete a byte
      const i = at();
      const s = argv[i] ?? "";
      if (s.length === 0) break;
      const p = int(s.length);
      argv[i] = s.slice(0, p) + s.slice(p + 1);
      break;
    }
    case 3: { // one key moved to another queue
      if (!shape || shape.keys.length === 0) break;
      const i = pick(shape.keys);
      argv[i] = renameQueue(argv[i]!, pick(random() < 0.7 ? NAMES : HOSTILE_NAMES));
      break;
    }
    case 4: { // every key of the call moved to another (possibly hostile) queue name
      if (!shape) break;
      const name = pick(random() < 0.5 ? NAMES : HOSTILE_NAMES);
      for (const i of shape.keys) argv[i] = renameQueue(argv[i]!, name);
      break;
    }
    case 5: { // two keys swapped
      if (!shape || shape.keys.length < 2) break;
      const i = pick(shape.keys);
      const j = pick(shape.keys);
      [argv[i], argv[j]] = [argv[j]!, argv[i]!];
      break;
    }
    case 6: // an empty element
      argv[at()] = "";
      break;
    case 7: // numkeys
      argv[1] = pick(BAD_NUMKEYS);
      break;
    case 8: { // a number argument
      if (!shape) break;
      const slots = (["due_ms", "lease_ms", "delay_ms", "limit"] as const).map((t) => shape.args.get(t)).filter((x) => x !== undefined);
      if (slots.length === 0) break;
      argv[pick(slots)] = pick(BAD_NUMBERS);
      break;
    }
    case 9: { // the id (and half the time the row key with it, so the gate is reached)
      const idAt = shape?.args.get("id");
      if (!shape || idAt === undefined) break;
      const id = random() < 0.5 ? pick(BAD_IDS) : pick(IDS);
      argv[idAt] = id;
      if (random() < 0.5 && shape.keys[0] !== undefined) {
        const row = argv[shape.keys[0]]!;
        const j = row.lastIndexOf(":job:");
        if (j >= 0) argv[shape.keys[0]] = `${row.slice(0, j)}:job:${id}`;
      }
      break;
    }
    case 10: // drop an element
      argv.splice(at(), 1);
      break;
    case 11: // one more argument
      argv.push(random() < 0.5 ? "extra" : bytes(int(8)));
      break;
    case 12: // a wrong verb
      argv[0] = pick(WRONG_VERBS);
      break;
    case 13: { // a garbage key
      if (!shape || shape.keys.length === 0) break;
      let s = "";
      for (let n = int(6); n >= 0; n--) {
        s += pick(["emq:{", "}", ":", "pending", "active", "job:", "{", "\0", "emq:", "}:", bytes(1 + int(4))]);
      }
      argv[pick(shape.keys)] = s;
      break;
    }
  }
}

function hostileCall(n: number): Bin[] {
  if (OVERSIZED_AT.has(n)) {
    const ks = new Keyspace(pick(NAMES));
    const id = pick(IDS);
    const big = "P".repeat(MAX_PAYLOAD + 1 + int(MAX_PAYLOAD));
    return random() < 0.5
      ? ["EMQ.ENQUEUE", "2", ks.job(id as never), ks.pending, id, big]
      : ["EMQ.SCHEDULE", "2", ks.job(id as never), ks.schedule, id, "0", big];
  }
  if (random() < 0.03) { // fully random vector
    return Array.from({ length: 1 + int(8) }, (_, i) => (i === 0 ? pick([...WRONG_VERBS, ...VERBS.map((v) => `EMQ.${v}`)]) : bytes(int(24))));
  }
  const argv = validCall();
  const rounds = random() < 0.15 ? 0 : 1 + int(3);
  for (let r = 0; r < rounds; r++) mutate(argv);
  return argv;
}

/**
 * The server echoes the first arguments of an unknown command in its error text, byte for byte,
 * and glide 2.2.5 cannot parse an error reply that is not UTF-8: it drops the connection (and
 * every request in flight on it). So the arguments of an unknown command are sent as printable
 * ASCII; the module never sees these calls anyway.
 */
function sendable(argv: Bin[], p: Prediction): Bin[] {
  if (p.kind !== "unknown") return argv;
  return argv.map((a, i) => (i === 0 ? a : a.replace(/[^\x20-\x7e]/g, "?")));
}

// State for the domain steps to meet: rows, pending, active, scheduled and dead ids, and keys of
// the wrong Valkey type. Rebuilt (after FLUSHALL) at the start of every batch.
function seed(): Bin[][] {
  const out: Bin[][] = [["FLUSHALL", "SYNC"]];
  // small on purpose: DEBUG DIGEST, run after every call, costs time in proportion to the keys
  for (const name of ["a", bin("ü-queue")]) {
    const ks = new Keyspace(name);
    for (let i = 0; i < 4; i++) out.push(["EMQ.ENQUEUE", "2", `${ks.base}job:${IDS[i]}`, ks.pending, IDS[i]!, "p"]);
    out.push(["EMQ.CLAIM", "3", ks.pending, ks.active, ks.base, "60000"]);
    out.push(["EMQ.SCHEDULE", "2", `${ks.base}job:${IDS[10]}`, ks.schedule, IDS[10]!, "0", "s"]);
    out.push(["EMQ.CLAIM", "3", ks.pending, ks.active, ks.base, "1"]);
  }
  out.push(["SET", "emq:{b}:pending", "not a list"]);
  out.push(["SET", "emq:{b}:active", "not a zset"]);
  out.push(["LPUSH", `emq:{orders}:job:${IDS[12]}`, "not a hash"]);
  out.push(["HSET", `emq:{x:y}:job:${IDS[13]}`, "attempts", "NaN"]);
  out.push(["LPUSH", "emq:{x:y}:pending", IDS[13]!]);
  return out;
}

// ---------------------------------------------------------------------------------------------

function plainError(r: GlideReturnType | Error): string | null {
  if (!(r instanceof Error)) return null;
  return serverText(r) ?? r.message;
}

test(`${CASES} hostile calls: host and module agree on every verdict; refusals change nothing`, async () => {
  const pid = server.pid;
  const tally = { unknown: 0, shape: 0, layout: 0, gate: 0, domain: 0, ok: 0, utf8Checked: 0 };
  const mismatches: string[] = [];
  const note = (what: string): void => {
    if (mismatches.length < 20) mismatches.push(what);
  };
  const show = (argv: Bin[]): string =>
    JSON.stringify(argv.map((a) => (a.length > 80 ? `${a.slice(0, 40)}…(${a.length} bytes)` : a)));

  for (let done = 0; done < CASES; done += BATCH) {
    const raw = Array.from({ length: Math.min(BATCH, CASES - done) }, (_, i) => hostileCall(done + i));
    const predictions = raw.map(predict);
    const calls = raw.map((argv, i) => sendable(argv, predictions[i]!));

    // The host checks alone, on every key-like element: bytes and (when valid UTF-8) text agree.
    for (const argv of calls) {
      for (let i = 2; i < argv.length && i < 5; i++) {
        const b = argv[i]!;
        const split = splitQueueKey(b);
        if (split !== null && !validQueue(split.queue)) note(`splitQueueKey accepted an invalid name: ${show([b])}`);
        const text = Buffer.from(b, "latin1").toString("utf8");
        if (bin(text) !== b) continue; // not valid UTF-8: the byte view is the only one
        tally.utf8Checked++;
        const t = splitQueueKey(text);
        const same = (split === null && t === null) ||
          (split !== null && t !== null && bin(t.queue) === split.queue && bin(t.type) === split.type);
        if (!same) note(`byte and text verdicts differ for ${show([b])}`);
      }
    }

    const batch = new Batch(false);
    for (const c of seed()) batch.customCommand(c.map(wire));
    batch.customCommand(["DEBUG", "DIGEST"]);
    for (const argv of calls) {
      batch.customCommand(argv.map(wire));
      batch.customCommand(["DEBUG", "DIGEST"]);
    }
    const replies = (await client.exec(batch, false, { decoder: Decoder.Bytes, timeout: 60_000 })) as Array<
      GlideReturnType | Error
    >;
    const base = seed().length;
    for (let i = 0; i < calls.length; i++) {
      const before = String(replies[base + 2 * i]);
      const reply = replies[base + 2 * i + 1]!;
      const after = String(replies[base + 2 * i + 2]);
      if (before.length !== 40 || after.length !== 40) note(`DEBUG DIGEST failed around ${show(calls[i]!)}`);
      const p = predictions[i]!;
      const err = plainError(reply);
      const verb = ASCII_UPPER(calls[i]![0] ?? "").slice(4);
      if (err === null) {
        tally.ok++;
        if (p.kind !== "runs") note(`host predicted ${JSON.stringify(p)}, module ran ${show(calls[i]!)}`);
        continue;
      }
      if (before !== after) note(`refusal ${JSON.stringify(err)} changed the digest: ${show(calls[i]!)}`);
      let agree: boolean;
      switch (p.kind) {
        case "unknown":
          agree = err.startsWith("ERR unknown command");
          break;
        case "shape":
          agree = /^ERR wrong number of arguments for 'emq\.[a-z]+' command$/i.test(err);
          break;
        case "layout":
          agree = err === `ERR EMQ.${verb} keys do not match the wire-4 layout`;
          break;
        case "gate":
          agree = err === p.text;
          break;
        case "runs":
          agree = domainRefusal(verb, err);
          break;
      }
      if (!agree) note(`host predicted ${JSON.stringify(p)}, module said ${JSON.stringify(err)}: ${show(calls[i]!)}`);
      tally[p.kind === "runs" ? "domain" : p.kind]++;
    }
  }

  // The server is alive and well.
  expect(await client.ping()).toBe("PONG");
  expect(() => process.kill(pid, 0)).not.toThrow();
  expect(server.log()).not.toMatch(/BUG REPORT|panicked|Segmentation|crashed/i);
  console.log(
    `[hostile] ${CASES} calls: unknown verb ${tally.unknown}, shape ${tally.shape}, layout ${tally.layout}, ` +
      `gate ${tally.gate}, domain ${tally.domain} refusals, ${tally.ok} ran; ${tally.utf8Checked} keys also checked as ` +
      `UTF-8 text; disagreements ${mismatches.length}`,
  );
  expect(mismatches).toEqual([]);
  expect(tally.layout).toBeGreaterThan(CASES / 10);
  expect(tally.ok).toBeGreaterThan(CASES / 20);
}, 600_000);

test("clear error texts: oversized payloads, bad numbers, huge numkeys, zero or negative leases and delays", async () => {
  const ks = new Keyspace("texts");
  const id = jobId(1);
  const row = ks.job(id as never);
  const cases: Array<[string[], string]> = [
    [["EMQ.ENQUEUE", "2", row, ks.pending, id, "x".repeat(MAX_PAYLOAD + 1)], "ERR EMQ.ENQUEUE payload exceeds 1048576 bytes"],
    [["EMQ.SCHEDULE", "2", row, ks.schedule, id, "0", "x".repeat(2 * MAX_PAYLOAD)], "ERR EMQ.SCHEDULE payload exceeds 1048576 bytes"],
    [["EMQ.SCHEDULE", "2", row, ks.schedule, id, "soon", "p"], "ERR EMQ.SCHEDULE due_ms must be a non-negative integer"],
    [["EMQ.SCHEDULE", "2", row, ks.schedule, id, "-1", "p"], "ERR EMQ.SCHEDULE due_ms must be a non-negative integer"],
    [["EMQ.SCHEDULE", "2", row, ks.schedule, id, "1234567890123456", "p"], "ERR EMQ.SCHEDULE due_ms must be a non-negative integer"],
    [["EMQ.CLAIM", "3", ks.pending, ks.active, ks.base, "abc"], "ERR EMQ.CLAIM lease_ms must be a positive integer"],
    [["EMQ.CLAIM", "3", ks.pending, ks.active, ks.base, "0"], "ERR EMQ.CLAIM lease_ms must be a positive integer"],
    [["EMQ.CLAIM", "3", ks.pending, ks.active, ks.base, "-30000"], "ERR EMQ.CLAIM lease_ms must be a positive integer"],
    [["EMQ.RETRY", "3", row, ks.active, ks.schedule, id, "0", "r"], "ERR EMQ.RETRY delay_ms must be a positive integer"],
    [["EMQ.RETRY", "3", row, ks.active, ks.schedule, id, "-5", "r"], "ERR EMQ.RETRY delay_ms must be a positive integer"],
    [["EMQ.RETRY", "3", row, ks.active, ks.schedule, id, "1.5", "r"], "ERR EMQ.RETRY delay_ms must be a positive integer"],
    [["EMQ.PROMOTE", "3", ks.schedule, ks.pending, ks.base, "all"], "ERR EMQ.PROMOTE limit must be a positive integer"],
    [["EMQ.REAP", "3", ks.active, ks.pending, ks.base, "0"], "ERR EMQ.REAP limit must be a positive integer"],
    [["EMQ.BURY", "3", row, ks.active, ks.dead, id, "r".repeat(4097)], "ERR EMQ.BURY reason exceeds 4096 bytes"],
    [["EMQ.ENQUEUE", "999999999", row, ks.pending, id, "p"], "ERR wrong number of arguments for 'EMQ.ENQUEUE' command"],
    [["EMQ.CLAIM", "999999999", ks.pending, ks.active, ks.base, "1"], "ERR wrong number of arguments for 'EMQ.CLAIM' command"],
    [["EMQ.ACK", "-1", row, ks.active, id], "ERR wrong number of arguments for 'EMQ.ACK' command"],
    [["EMQ.ENQUEUE", "2", `${ks.base}job:nope`, ks.pending, "nope", "p"], "ERR EMQ.ENQUEUE id must be a JOB id"],
  ];
  for (const [argv, text] of cases) {
    const before = await digest(client);
    expectRefused(await call(client, argv), text);
    expect(await digest(client)).toBe(before);
  }
  // exactly the limit is accepted
  expectOk(await call(client, ["EMQ.ENQUEUE", "2", row, ks.pending, id, "x".repeat(MAX_PAYLOAD)]), 1);

  // through the client: the same rules, checked before any wire or named by the server's text
  const mq = await EchoMQ.connect<string>({ addresses: [{ host: "127.0.0.1", port: server.port }], requestTimeout: 10_000 });
  try {
    const before = await digest(client);
    const big = await mq.enqueue("texts", "x".repeat(MAX_PAYLOAD + 1)).catch((e) => e);
    expect(big).toBeInstanceOf(WireError);
    expect((big as WireError).rule).toBe("gate");
    expect((big as WireError).text).toBe("ERR EMQ.ENQUEUE payload exceeds 1048576 bytes");
    for (const [run, rule] of [
      [() => mq.claim("texts", { leaseMs: 0 }), "lease-ms"],
      [() => mq.claim("texts", { leaseMs: -1 }), "lease-ms"],
      [() => mq.claim("texts", { leaseMs: Number.NaN }), "lease-ms"],
      [() => mq.retry({ id: id as never, queue: "texts" }, { delayMs: 0 }), "delay-ms"],
      [() => mq.retry({ id: id as never, queue: "texts" }, { delayMs: -5 }), "delay-ms"],
      [() => mq.schedule("texts", "p", { delayMs: -1 }), "delay-ms"],
      [() => mq.schedule("texts", "p", { at: 1e16 }), "due-ms"],
      [() => mq.promote("texts", 0), "limit"],
      [() => mq.reap("texts", -1), "limit"],
    ] as Array<[() => Promise<unknown>, EchoMQError["rule"]]>) {
      const e = await run().catch((x) => x);
      expect(e).toBeInstanceOf(EchoMQError);
      expect((e as EchoMQError).rule).toBe(rule);
      expect((e as EchoMQError).message).toMatch(/must be an integer from \d+ to 999999999999999 \(wire-4 number gate\)/);
    }
    expect(await digest(client)).toBe(before);
  } finally {
    await mq.close();
  }
}, 120_000);
