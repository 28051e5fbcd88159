/**
 * Payload codecs: how a job's payload of type `P` becomes the bytes of the row's `payload` field
 * and back. JSON is the default; `bytes` stores raw bytes untouched; `text` stores UTF-8.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { EchoMQError } from "./errors.ts";

/** Turns payloads of type `P` into bytes for the wire and back. */
export interface Codec<P> {
  /** A short name for messages (`json`, `bytes`, `text`). */
  readonly name: string;
  /** The bytes (or a string, sent as UTF-8) stored as the row's payload. */
  encode(payload: P): string | Uint8Array;
  /** The payload back from the stored bytes. */
  decode(bytes: Uint8Array): P;
}

const utf8 = new TextDecoder("utf-8");

/** Raw bytes, stored as given (copied when read: the caller may reuse its buffer at once). */
export const bytes: Codec<Uint8Array> = {
  name: "bytes",
  encode: (payload: Uint8Array): Uint8Array => payload,
  decode: (stored: Uint8Array): Uint8Array => new Uint8Array(stored),
};

/** A UTF-8 string. */
export const text: Codec<string> = {
  name: "text",
  encode: (payload: string): string => payload,
  decode: (stored: Uint8Array): string => utf8.decode(stored),
};

/**
 * JSON text (`JSON.stringify` / `JSON.parse`); the type argument types the payloads. `undefined`
 * and functions have no JSON form: `json().encode(undefined)` throws.
 */
export function json<P = unknown>(): Codec<P> {
  return {
    name: "json",
    encode(payload: P): string {
      const out = JSON.stringify(payload);
      if (out === undefined) throw new TypeError("json codec: payload has no JSON form (undefined or a function)");
      return out;
    },
    decode: (stored: Uint8Array): P => JSON.parse(utf8.decode(stored)) as P,
  };
}

/**
 * `payload` encoded by `codec` for the call `what` (`enqueue`, `upsertScheduler`, …): a payload the
 * codec cannot encode (a BigInt, `undefined` under JSON; whatever a codec of yours throws) is an
 * {@link EchoMQError} of rule `payload` naming the call and the codec, its error the `cause`.
 */
export function encodePayload<P>(codec: Codec<P>, payload: P, what: string): string | Uint8Array {
  try {
    return codec.encode(payload);
  } catch (e) {
    throw new EchoMQError("payload", `${what}: the ${codec.name} codec cannot encode the payload: ${e instanceof Error ? e.message : String(e)}`, e);
  }
}

/**
 * An encoded payload as glide takes it: a string, or a copy of the bytes. A copy, because a call
 * reads its input before it sends it (`enqueueMany` a whole command's worth): a caller, or a codec,
 * may rewrite its buffer as soon as the payload is read.
 */
export function toWire(encoded: string | Uint8Array): string | Buffer {
  return typeof encoded === "string" ? encoded : Buffer.from(encoded);
}

/** The byte length of an encoded payload. */
export function byteLength(encoded: string | Uint8Array): number {
  return typeof encoded === "string" ? Buffer.byteLength(encoded, "utf8") : encoded.byteLength;
}
