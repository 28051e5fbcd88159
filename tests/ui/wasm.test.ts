// The module's keyspace compiled to WebAssembly (native/wasm), loaded in Bun through the page's own
// glue: its verdicts are the Rust/host vectors', and it splits and checks exactly as the host ports.
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { inspectKey } from "../../lib/cli/key.ts";
import { buildWasm } from "../../dev/ui/server/wasm.ts";
import { loadNative, type NativeKeyspace } from "../../dev/ui/shared/native.ts";
import { Keyspace, splitQueueKey } from "../../mod.ts";
import { readVectors } from "../vectors/keys.ts";

let native: NativeKeyspace;
// Rows marked hostOnly hold a lone surrogate, which no byte string carries (the Rust tests skip
// them too; a client would send U+FFFD, a vector of its own).
const cases = readVectors().filter((c) => !(c as { hostOnly?: boolean }).hostOnly);

beforeAll(async () => {
  native = await loadNative(readFileSync(await buildWasm()));
}, 180_000);

describe("the keyspace wasm", () => {
  test("exports only the C ABI (memory, emq_alloc, emq_free, emq_verdict) and imports nothing", async () => {
    const module = await WebAssembly.compile(readFileSync(await buildWasm()));
    expect(WebAssembly.Module.imports(module)).toEqual([]);
    const names = WebAssembly.Module.exports(module).map((e) => e.name).filter((n) => !n.startsWith("__"));
    expect(names.sort()).toEqual(["emq_alloc", "emq_free", "emq_verdict", "memory"]);
  });

  test.each(cases.map((c) => [c.note, c] as const))("vector: %s", (_note, c) => {
    const v = native.verdict(c.key, c.fromKey.type);
    expect(v.split).toEqual(c.split);
    expect(v.accepted ? v.split!.queue : null).toBe(c.fromKey.queue);
    expect(v.reason === null).toBe(v.accepted);
    if (c.queue !== undefined && c.type !== undefined) {
      // A composed row: the module's verdict on the name, in `emq key`'s words.
      const composed = native.verdict(c.key, c.type);
      expect(composed.accepted).toBe(c.nativeValid!);
      expect(composed.reason).toBe(inspectKey(c.queue, c.type).native);
    }
  });

  test("reasons: no split, another type, the empty name", () => {
    expect(native.verdict("emq:{a}b}:pending", "pending")).toMatchObject({ split: null, accepted: false, code: 1 });
    expect(native.verdict("emq:{orders}:pending", "active")).toMatchObject({ accepted: false, code: 2 });
    expect(native.verdict("emq:{}:pending", "pending")).toEqual({
      split: { queue: "", type: "pending" },
      accepted: false,
      code: 3,
      reason: "the module refuses the empty name: an empty {} carries no hashtag",
    });
    expect(native.verdict("emq:{orders}:pending", "pending")).toEqual({
      split: { queue: "orders", type: "pending" },
      accepted: true,
      code: 0,
      reason: null,
    });
  });

  test("agrees with the host ports (splitQueueKey, Keyspace.fromKey) on arbitrary keys", () => {
    const piece = fc.string({ unit: fc.constantFrom("a", "é", "队", "🚀", "{", "}", ":", "\0", " ", "emq:", "job:"), maxLength: 12 });
    const key = fc.oneof(
      fc.tuple(piece, piece).map(([q, t]) => ({ key: `emq:{${q}}:${t}`, type: t })),
      fc.tuple(piece, piece).map(([k, t]) => ({ key: k, type: t })),
    );
    fc.assert(
      fc.property(key, ({ key, type }) => {
        const v = native.verdict(key, type);
        expect(v.split).toEqual(splitQueueKey(key));
        expect(v.accepted ? v.split!.queue : null).toBe(Keyspace.fromKey(key, type)?.name ?? null);
      }),
      { numRuns: 3000 },
    );
  });

  test("every buffer is freed: a thousand calls on 100 kB keys do not grow the memory", () => {
    const big = (i: number): string => `emq:{${"q".repeat(100_000 + i)}}:pending`;
    native.verdict(big(0), "pending");
    const before = native.memoryBytes();
    for (let i = 0; i < 1000; i++) expect(native.verdict(big(i), "pending").accepted).toBe(true);
    expect(native.memoryBytes()).toBe(before);
  });
});
