/**
 * Payload types the compiler checks. With the default JSON codec, a payload must be something JSON
 * carries: a BigInt, `undefined`, a function, a symbol, a `Map` or a `Set` anywhere in it is a
 * compile error naming what has no JSON form ({@link JsonPayload}); and what comes back (a claimed
 * job's payload, `getJob`) is typed as JSON gives it back — type-fest's `Jsonify` (a `Date` comes
 * back a string, a `toJSON` object as what `toJSON` returns, `undefined` fields are gone). With a
 * codec of your own, payloads are the codec's type, in and out. A queue's results are checked and
 * typed the same way ({@link JsonResult} returned by its handler, {@link DecodedResult} back),
 * with any codec: a result is always JSON.
 *
 * @example
 * ```ts
 * import type { Decoded, JsonPayload } from "../../client.ts";
 * type Bill = { amount: number; at: Date };
 * const ok: JsonPayload<Bill> = { amount: 1, at: new Date() };
 * const back: Decoded<Bill, "json"> = { amount: 1, at: "2026-01-01T00:00:00.000Z" };
 * void ok, back;
 * ```
 *
 * @module
 */
import type { Jsonifiable, Jsonify, JsonPrimitive, JsonValue } from "type-fest";

/** Which payloads a client or queue handle takes: JSON (the default codec), or a codec's own type. */
export type PayloadKind = "json" | "codec";

/** The message a payload field with no JSON form is checked against (and so fails with). */
export type NoJson<What extends string> = `${What} has no JSON form: use another type, or a codec of your own`;

/**
 * `P` when JSON carries it losslessly (interfaces included, unlike an index-signature type), else
 * `P` with each field JSON cannot carry replaced by a message naming it: a payload of such a type
 * fails to compile with that message. Dates and other `toJSON` objects are accepted (they come
 * back as `toJSON` made them: see {@link Decoded}); an optional field may be `undefined`. An
 * untyped client (`unknown`) takes any `Jsonifiable` value; a `Uint8Array` is left alone (the
 * `bytes` codec's payload, for clients whose codec is not known to the compiler).
 */
export type JsonPayload<P> = unknown extends P ? Jsonifiable
  : P extends JsonValue | Uint8Array ? P
  : P extends JsonPrimitive ? P
  : P extends { toJSON(): unknown } ? P
  : P extends bigint ? NoJson<"a bigint">
  : P extends symbol ? NoJson<"a symbol">
  : P extends undefined ? NoJson<"undefined">
  : P extends (...args: never) => unknown ? NoJson<"a function">
  : P extends ReadonlyMap<unknown, unknown> ? NoJson<"a Map">
  : P extends ReadonlySet<unknown> ? NoJson<"a Set">
  : P extends readonly unknown[] ? { [K in keyof P]: JsonPayload<P[K]> }
  : { [K in keyof P]: undefined extends P[K] ? JsonPayload<Exclude<P[K], undefined>> | undefined : JsonPayload<P[K]> };

/** What a payload of type `P` is sent as: checked by {@link JsonPayload} with the JSON codec. */
export type Payload<P, K extends PayloadKind> = K extends "json" ? JsonPayload<P> : P;

/** What a payload of type `P` comes back as: JSON's view of it (`Jsonify`), or the codec's type. */
export type Decoded<P, K extends PayloadKind> = K extends "json" ? unknown extends P ? P : P extends Uint8Array ? P : Jsonify<P> : P;

/**
 * What a handler of a queue whose results are of type `R` may return (or resolve with): `R`,
 * checked as {@link JsonPayload} checks a payload — a result is always sent as JSON, whatever the
 * payload codec — except that `undefined` (or `void`: a handler that returns nothing) stands for
 * "no result" where `R` allows it.
 * An untyped queue's handler (`unknown`) returns anything.
 */
export type JsonResult<R> = unknown extends R ? R : R extends undefined | void ? R | void : JsonPayload<R>;

/**
 * What a result of type `R` comes back as (`result()`, `enqueue` with `wait`): JSON's view of it
 * (`Jsonify`; a `Date` comes back a string), `undefined` for "no result" where `R` allows it;
 * `unknown` for an untyped queue. It assumes the queue keeps its completed jobs: one that keeps
 * none (`completedMax` 0) may answer `undefined` whatever `R` says.
 */
export type DecodedResult<R> = unknown extends R ? R : R extends undefined | void ? undefined : Jsonify<R>;
