/**
 * The shape of one row of tests/vectors/keys.json, shared by the generator
 * (tools/gen_vectors.ts) and the host tests; the native tests read the same fields in Rust.
 */
import { readFileSync } from "node:fs";

/** One vector: a key with its expected split, fromKey, hashtag and slot, and optional verdicts. */
export interface VectorCase {
  /** What the row exercises. */
  note: string;
  /**
   * The key holds a lone surrogate: no byte string carries one (a client sends U+FFFD in its
   * place, and serde_json refuses the escape), so only the host tests check this row.
   */
  hostOnly?: true;
  /** The key under test. */
  key: string;
  /** The name under test (composed rows): the key is `emq:{queue}:type`, built without checks. */
  queue?: string;
  /** The type the key was composed with. */
  type?: string;
  /** Host verdict on `queue`. */
  valid?: boolean;
  /** Native verdict on `queue` (valid and non-empty). */
  nativeValid?: boolean;
  /** The id of a row key `job:<id>`. */
  id?: string;
  /** Whether `id` is a branded id. */
  idValid?: boolean;
  /** Whether `id` is a branded id in the JOB namespace. */
  jobId?: boolean;
  /** Expected `splitQueueKey(key)`. */
  split: { queue: string; type: string } | null;
  /** Expected `Keyspace.fromKey(key, type)` queue name, or null. */
  fromKey: { type: string; queue: string | null };
  /** Expected `hashtag(key)`. */
  hashtag: string | null;
  /** The slot a real server's `CLUSTER KEYSLOT` gave. */
  slot: number;
}

/** One name inside a queue (a lane) and its verdict on both halves. */
export interface NameCase {
  /** What the row exercises. */
  note: string;
  /** The name holds a lone surrogate: only the host checks this row. */
  hostOnly?: true;
  /** The name. */
  name: string;
  /** `validName` / `valid_name`. */
  valid: boolean;
}

/** The keys of one lane of one queue, as both halves must build them. */
export interface LaneKeyCase {
  /** The queue. */
  queue: string;
  /** The lane (`""`: the default lane). */
  lane: string;
  /** The priority. */
  priority: number;
  /** `ready(lane, priority)`. */
  ready: string;
  /** `levels(lane)`. */
  levels: string;
  /** `lane(lane)`. */
  state: string;
}

/** The file's location. */
export const VECTORS_URL: URL = new URL("./keys.json", import.meta.url);

/** Every row of tests/vectors/keys.json. */
export function readVectors(): VectorCase[] {
  return JSON.parse(readFileSync(VECTORS_URL, "utf8")).cases;
}

/** The name rows and the lane-key rows of tests/vectors/keys.json. */
export function readLaneVectors(): { names: NameCase[]; laneKeys: LaneKeyCase[] } {
  const v = JSON.parse(readFileSync(VECTORS_URL, "utf8"));
  return { names: v.names, laneKeys: v.laneKeys };
}

/**
 * Oracle: no lone surrogate, by code units — not by the library's `isWellFormed`, and not by
 * regular expression (Bun's `/\p{Cs}/u` misses one followed by U+FFFD). Shared by the vectors'
 * generator and the property tests.
 */
export function wellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff) return false;
    if (c < 0xd800 || c > 0xdbff) continue;
    const d = s.charCodeAt(++i);
    if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
  }
  return true;
}
