/**
 * Regenerates tests/vectors/keys.json, the cases both the TypeScript keyspace and the native
 * module's unit tests must agree with. Expected verdicts come from small regular-expression
 * oracles written here from docs/GRAMMAR.md (not from the code under test); every slot comes from a
 * real valkey-server's `CLUSTER KEYSLOT`.
 *
 * Run: node_modules/.bin/bun tools/gen_vectors.ts
 */
import { writeFileSync } from "node:fs";
import { command, startServer } from "./embedded/mod.ts";
import { type LaneKeyCase, type NameCase, type VectorCase, VECTORS_URL, wellFormed } from "../tests/vectors/keys.ts";

const TYPES = ["pending", "active", "schedule", "dead", "meta"] as const;
const PLAIN_TYPES_OF_WIRE_6 = ["ring", "lanes", "parked"] as const;
const TIME_TYPES_OF_WIRE_6 = ["schedulers"] as const;
const DEDUP_TYPES_OF_WIRE_7 = ["dedup", "dedup_ttl"] as const;
const FLOW_TYPES = ["waiting", "outbox"] as const;
const HISTORY_TYPES = ["metrics"] as const;
const GOOD_ID = "JOB0Nb1VTbfnu4";

// --- oracles, straight from the grammar -------------------------------------------------------
const validName = (q: string): boolean => !/[{}\0]/.test(q) && wellFormed(q);
/** A key with a lone surrogate exists only on the host: the bytes a client sends carry U+FFFD in
 * its place (and serde_json, which the native tests read this file with, refuses the escape). */
const hostOnly = (key: string): { hostOnly?: true } => (wellFormed(key) ? {} : { hostOnly: true });
const splitOracle = (key: string): { queue: string; type: string } | null => {
  const m = /^emq:\{([^}]*)\}:([\s\S]*)$/.exec(key);
  return m && validName(m[1]) ? { queue: m[1], type: m[2] } : null;
};
const hashtagOracle = (key: string): string | null => {
  const m = /\{([^}]*)\}/.exec(key);
  return m && m[1] !== "" ? m[1] : null;
};
const brandedOracle = (id: string): boolean => /^[A-Z]{3}[0-9A-Za-z]{11}$/.test(id);

/** A row before its slot is read from the server. */
type Case = Omit<VectorCase, "slot"> & { slot?: number };

const cases: Case[] = [];
const fromKeyOracle = (key: string, type: string): { type: string; queue: string | null } => {
  const s = splitOracle(key);
  return { type, queue: s && s.type === type && s.queue !== "" ? s.queue : null };
};

/** A composed row: the key built without checks (so a bad name shows what it would build), with
 * the host and native verdicts on the name, and on the id for a row key `job:<id>`. */
function composed(note: string, queue: string, type: string, id?: string): void {
  const key = `emq:{${queue}}:${type}`;
  cases.push({
    note,
    ...hostOnly(key),
    key,
    queue,
    type,
    valid: validName(queue),
    nativeValid: validName(queue) && queue !== "",
    ...(id === undefined ? {} : { id, idValid: brandedOracle(id), jobId: brandedOracle(id) && id.startsWith("JOB") }),
    split: splitOracle(key),
    fromKey: fromKeyOracle(key, type),
    hashtag: hashtagOracle(key),
  });
}

/** A name row, with a queue type (cycling when none is given). */
function name(note: string, queue: string, type: string = TYPES[cases.length % TYPES.length]): void {
  composed(note, queue, type);
}

/** A job-row row: queue + `job:<id>`. */
function job(note: string, queue: string, id: string): void {
  composed(note, queue, `job:${id}`, id);
}

/** A raw key row, asked for as `type`. */
function raw(note: string, key: string, type: string): void {
  cases.push({
    note,
    ...hostOnly(key),
    key,
    split: splitOracle(key),
    fromKey: fromKeyOracle(key, type),
    hashtag: hashtagOracle(key),
  });
}

// Names: every type once for the plain name, then the edge cases the grammar names.
for (const t of TYPES) name(`plain name, ${t}`, "orders", t);
name("plain name, wake (the idle workers' markers, wire-5)", "orders", "wake");
for (const t of PLAIN_TYPES_OF_WIRE_6) name(`plain name, ${t} (lanes, wire-6)`, "orders", t);
for (const t of TIME_TYPES_OF_WIRE_6) name(`plain name, ${t} (schedulers, wire-6)`, "orders", t);
for (const t of DEDUP_TYPES_OF_WIRE_7) name(`plain name, ${t} (deduplication, wire-7)`, "orders", t);
for (const t of FLOW_TYPES) name(`plain name, ${t} (flows)`, "orders", t);
for (const t of HISTORY_TYPES) name(`plain name, ${t} (history)`, "orders", t);
name("a scheduler's hash", "orders", "scheduler:nightly");
name("a lane's ready list", "orders", "ready:0:tenant-42");
name("the default lane's state", "orders", "lane:");
name("colon in the name, wake", "a:b", "wake");
name("empty name: host accepts, native refuses, no hashtag", "", "pending");
name("empty name, meta", "", "meta");
name("close brace moves the hashtag", "a}b", "pending");
name("open brace", "a{b", "pending");
name("NUL", "a\0b", "pending");
name("lone NUL", "\0", "active");
name("lone close brace", "}", "dead");
name("lone open brace", "{", "schedule");
name("empty braces inside the name", "a{}b", "pending");
name("nested braces", "{orders}", "pending");
name("trailing close brace", "orders}", "active");
name("colon is legal", "a:b", "pending");
name("colons and priority", "emails:high", "schedule");
name("looks like a key", "emq:x:pending", "dead");
name("non-ASCII Latin", "ünïcödé", "pending");
name("non-ASCII CJK", "队列", "active");
name("astral emoji", "emoji🚀", "meta");
name("1000-byte name", "q".repeat(1000), "pending");
name("1000-byte multibyte name", "é".repeat(500), "dead");
name("space", "a b", "pending");
name("tab", "tab\tq", "active");
name("newline", "new\nline", "schedule");
name("digits", "12345", "dead");
name("a job id as a name", GOOD_ID, "meta");
name("slash and dots", "svc/a.b-c_d", "pending");
name("upper case", "ORDERS", "active");
name("single char", "x", "schedule");
name("brace at the end of a long name", `${"x".repeat(200)}}`, "pending");
// Lone surrogates (host only): the client would send U+FFFD (EF BF BD) in their place, so three
// different names would share one queue on the server; the host refuses them after `}`, `{`, NUL.
name("lone high surrogate: would alias U+FFFD on the server", "a\ud800b", "pending");
name("lone low surrogate", "\udfff", "active");
name("surrogate pair in the wrong order", "\ude80\ud83d", "meta");
name("lone high surrogate then U+FFFD", "\ud800\ufffd", "schedule");
name("U+FFFD itself is well formed", "a\ufffdb", "pending");
name("lone surrogate and a close brace: the brace is named first", "\ud800}", "dead");

// Job rows.
job("valid job id", "orders", GOOD_ID);
job("valid job id, all z", "orders", "JOBzzzzzzzzzzz");
job("valid job id, all 0", "a:b", "JOB00000000000");
job("13 bytes", "orders", "JOB0Nb1VTbfnu");
job("15 bytes", "orders", "JOB0Nb1VTbfnu45");
job("not Base62 (_)", "orders", "JOB0Nb1VTbfn_4");
job("lower-case namespace", "orders", "job0Nb1VTbfnu4");
job("branded but not JOB", "orders", "ABC0Nb1VTbfnu4");
job("non-ASCII payload", "orders", "JOBé0000000000");
job("empty id", "orders", "");
job("valid id, empty queue", "", GOOD_ID);
job("valid id, brace queue", "a}b", GOOD_ID);
job("valid id, non-ASCII queue", "队列", GOOD_ID);
job("valid id, lone-surrogate queue", "q\udc00", GOOD_ID);
job("branded USR id: a row key takes any namespace", "orders", "USR0Nb1VTbfnu4");
job("namespace with a digit", "orders", "US10Nb1VTbfnu4");

// Raw keys.
raw("wrong-case literal prefix", "EMQ:{orders}:pending", "pending");
raw("missing }:", "emq:{orders}pending", "pending");
raw("no type at all", "emq:{orders}", "pending");
raw("unterminated name", "emq:{orders", "pending");
raw("missing colon before brace", "emq{orders}:pending", "pending");
raw("the base: empty type", "emq:{orders}:", "");
raw("type mismatch", "emq:{orders}:pending", "active");
raw("empty {} tag", "emq:{}:pending", "pending");
raw("brace inside moves the tag", "emq:{a}b}:pending", "pending");
raw("nested braces", "emq:{{a}}:pending", "pending");
raw("open brace in the name", "emq:{a{b}:pending", "pending");
raw("extra segments stay in the type", "emq:{orders}:pending:extra", "pending:extra");
raw("a brace in the type: the name ends at the first }", "emq:{q}:job:a}:b", "job:a}:b");
raw("double colon", "emq:{orders}::pending", ":pending");
raw("leading space", " emq:{orders}:pending", "pending");
raw("empty key", "", "pending");
raw("job row asked as job row", `emq:{orders}:job:${GOOD_ID}`, `job:${GOOD_ID}`);
raw("job row asked as pending", `emq:{orders}:job:${GOOD_ID}`, "pending");
raw("cluster-key-slot disagrees: {}fo}o", "{}fo}o", "pending");
raw("empty tag then a tag", "foo{}{bar}", "pending");
raw("double open", "foo{{bar}}zap", "pending");
raw("two tags: the first wins", "foo{bar}{zap}", "pending");
raw("BullMQ-style key", "bull:orders:wait", "pending");
raw("lone surrogate in a raw key's tag", "{a\ud800b}x", "pending");
raw("lone surrogate outside the tag", "\udc00{orders}", "pending");
raw("no braces", "plain-key", "pending");

// --- names inside a queue (lanes) and the keys of a lane ----------------------------------------
// Oracle from docs/GRAMMAR.md: non-empty, the queue-name rule, at most 1024 bytes of UTF-8.
const nameOracle = (n: string): boolean => n !== "" && validName(n) && new TextEncoder().encode(n).length <= 1024;
const names: NameCase[] = [
  ["a plain lane", "tenant-42"],
  ["one byte", "x"],
  ["empty: the default lane's server name, not a user's", ""],
  ["close brace", "a}b"],
  ["open brace", "a{b"],
  ["NUL", "a\0b"],
  ["colon and digits are legal", "5:x"],
  ["non-ASCII", "队列"],
  ["1024 bytes", "n".repeat(1024)],
  ["1025 bytes", "n".repeat(1025)],
  ["1024 bytes of 2-byte characters", "é".repeat(512)],
  ["1026 bytes of 2-byte characters", "é".repeat(513)],
  ["a lone surrogate (host only)", "a\ud800"],
].map(([note, name]) => ({ note: note!, ...hostOnly(name!), name: name!, valid: nameOracle(name!) }));
// ready("", 0) is pending; every other list carries the priority before the lane.
const laneKeys: LaneKeyCase[] = [
  ["orders", "", 0],
  ["orders", "", 5],
  ["orders", "tenant-42", 0],
  ["orders", "tenant-42", 2097151],
  ["orders", "5:x", 0],
  ["orders", "x", 5],
  ["a:b", "队列", 1],
].map(([queue, lane, priority]) => {
  const base = `emq:{${queue}}:`;
  return {
    queue: queue as string,
    lane: lane as string,
    priority: priority as number,
    ready: lane === "" && priority === 0 ? `${base}pending` : `${base}ready:${priority}:${lane}`,
    levels: `${base}levels:${lane}`,
    state: `${base}lane:${lane}`,
  };
});

// --- slots from a real server -----------------------------------------------------------------
const server = await startServer({ module: false, cluster: true });
try {
  for (const c of cases) {
    const reply = await command(server.port, ["CLUSTER", "KEYSLOT", c.key]);
    if (typeof reply !== "number") throw new Error(`CLUSTER KEYSLOT ${JSON.stringify(c.key)}: ${String(reply)}`);
    c.slot = reply;
  }
} finally {
  await server.stop();
}

const out = {
  comment: "Shared keyspace vectors: regenerate with `node_modules/.bin/bun tools/gen_vectors.ts`. " +
    "Verdicts from the grammar's oracles, slots from a real valkey-server CLUSTER KEYSLOT.",
  cases,
  names,
  laneKeys,
};
writeFileSync(VECTORS_URL, `${JSON.stringify(out, null, 1)}\n`);
console.log(`wrote ${cases.length} cases`);
