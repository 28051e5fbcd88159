/**
 * The native half of the key panel: the module's own keyspace (`native/src/keyspace.rs`, built to
 * `wasm32-unknown-unknown` by `native/wasm`) loaded from its bytes. Runs in the browser and in
 * Bun/Deno alike (only `WebAssembly` and `TextEncoder`/`TextDecoder`).
 *
 * @module
 */

/** What the module's keyspace says about one key and the type it was expected to have. */
export interface NativeVerdict {
  /** `split_queue_key(key)`: the queue name and type, or null when the key does not split. */
  readonly split: { readonly queue: string; readonly type: string } | null;
  /** Whether `Queue::from_key(key, type)` accepts. */
  readonly accepted: boolean;
  /** The reason number (0 accepted, 1 no split, 2 other type, 3 empty name). */
  readonly code: number;
  /** Why it refuses, worded as `emq key` words it; null when accepted. */
  readonly reason: string | null;
}

/** The module's keyspace check, instantiated. */
export interface NativeKeyspace {
  /** Runs `split_queue_key` and `Queue::from_key` on `key` (UTF-8) with the expected `type`. */
  verdict(key: string, type: string): NativeVerdict;
  /** The size of the module's memory in bytes (it grows, never shrinks: a leak would show). */
  memoryBytes(): number;
}

interface Exports {
  readonly memory: WebAssembly.Memory;
  emq_alloc(len: number): number;
  emq_free(ptr: number, len: number): void;
  emq_verdict(key: number, keyLen: number, ty: number, tyLen: number, out: number): number;
}

/** Words `emq_verdict` writes (native/wasm/src/lib.rs `VERDICT_WORDS`). */
const WORDS = 9;

/** Instantiates the keyspace wasm from its bytes (it imports nothing). */
export async function loadNative(bytes: BufferSource): Promise<NativeKeyspace> {
  const instance = await WebAssembly.instantiate(await WebAssembly.compile(bytes), {});
  const x = instance.exports as unknown as Exports;
  for (const name of ["emq_alloc", "emq_free", "emq_verdict"] as const) {
    if (typeof x[name] !== "function") throw new Error(`the keyspace wasm does not export ${name}`);
  }
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  // Copies bytes into a fresh buffer of the module's; every view is taken after the last
  // allocation, since an allocation may grow (and so detach) the memory.
  const put = (bytes: Uint8Array): number => {
    const ptr = x.emq_alloc(bytes.length);
    new Uint8Array(x.memory.buffer).set(bytes, ptr);
    return ptr;
  };
  return {
    memoryBytes: () => x.memory.buffer.byteLength,
    verdict(key: string, type: string): NativeVerdict {
      const k = encoder.encode(key);
      const t = encoder.encode(type);
      const kp = put(k);
      const tp = put(t);
      const op = x.emq_alloc(4 * WORDS);
      try {
        x.emq_verdict(kp, k.length, tp, t.length, op);
        const view = new DataView(x.memory.buffer, op, 4 * WORDS);
        const w = (i: number): number => view.getUint32(4 * i, true);
        const text = (off: number, len: number): string => decoder.decode(k.subarray(off, off + len));
        const accepted = w(5) === 1;
        const words = decoder.decode(new Uint8Array(x.memory.buffer, w(7), w(8)));
        return {
          split: w(0) === 1 ? { queue: text(w(1), w(2)), type: text(w(3), w(4)) } : null,
          accepted,
          code: w(6),
          reason: accepted ? null : words || `refused without a reason (code ${w(6)})`,
        };
      } finally {
        x.emq_free(kp, k.length);
        x.emq_free(tp, t.length);
        x.emq_free(op, 4 * WORDS);
      }
    },
  };
}
