/**
 * A minimal RESP2 client over `node:net`, enough for the launcher to probe and wait on its own
 * servers (PING, INFO, CLUSTER INFO, WAIT). Tests talk to servers through glide, not through this.
 *
 * @module
 */
import { connect } from "node:net";
import { LOOPBACK } from "./ports.ts";

/** A decoded RESP2 reply. Error replies are returned as {@link RespError}, never thrown. */
export type RespValue = string | number | null | RespError | RespValue[];

/** An error reply (`-ERR …`) from the server. */
export class RespError {
  /** The error text without the leading `-`. */
  readonly message: string;
  /** Wraps an error reply's text. */
  constructor(message: string) {
    this.message = message;
  }
}

/** Encodes one command as a RESP array of bulk strings. */
function encode(args: readonly string[]): Uint8Array {
  const parts: string[] = [`*${args.length}\r\n`];
  for (const a of args) parts.push(`$${new TextEncoder().encode(a).length}\r\n${a}\r\n`);
  return new TextEncoder().encode(parts.join(""));
}

/** Parses one reply at `pos`; returns undefined when the buffer is incomplete. */
function parse(buf: Uint8Array, pos: number): [RespValue, number] | undefined {
  if (pos >= buf.length) return undefined;
  let eol = -1;
  for (let i = pos; i + 1 < buf.length; i++) {
    if (buf[i] === 13 && buf[i + 1] === 10) {
      eol = i;
      break;
    }
  }
  if (eol < 0) return undefined;
  const dec = new TextDecoder();
  const line = dec.decode(buf.subarray(pos + 1, eol));
  const next = eol + 2;
  switch (String.fromCharCode(buf[pos]!)) {
    case "+":
      return [line, next];
    case "-":
      return [new RespError(line), next];
    case ":":
      return [Number(line), next];
    case "$": {
      const len = Number(line);
      if (len < 0) return [null, next];
      if (next + len + 2 > buf.length) return undefined;
      return [dec.decode(buf.subarray(next, next + len)), next + len + 2];
    }
    case "*": {
      const n = Number(line);
      if (n < 0) return [null, next];
      const out: RespValue[] = [];
      let p = next;
      for (let i = 0; i < n; i++) {
        const r = parse(buf, p);
        if (!r) return undefined;
        out.push(r[0]);
        p = r[1];
      }
      return [out, p];
    }
    default:
      throw new Error(`unexpected RESP byte ${buf[pos]}`);
  }
}

/**
 * Sends one command to `127.0.0.1:port` on a fresh connection and resolves with its reply.
 * Rejects on connection errors or after `timeoutMs` (default 5000).
 */
export function command(port: number, args: readonly string[], timeoutMs = 5000): Promise<RespValue> {
  return new Promise<RespValue>((resolveReply, reject) => {
    let buf: Uint8Array = new Uint8Array(0);
    let settled = false;
    const sock = connect({ port, host: LOOPBACK });
    const finish = (err: Error | null, value?: RespValue): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolveReply(value ?? null);
    };
    const timer = setTimeout(() => finish(new Error(`timeout: ${args[0]} on port ${port}`)), timeoutMs);
    sock.once("error", (e: Error) => finish(e));
    sock.once("connect", () => sock.write(encode(args)));
    sock.on("data", (chunk: Uint8Array) => {
      const merged = new Uint8Array(buf.length + chunk.length);
      merged.set(buf);
      merged.set(chunk, buf.length);
      buf = merged;
      try {
        const r = parse(buf, 0);
        if (r) finish(null, r[0]);
      } catch (e) {
        finish(e as Error);
      }
    });
    sock.once("close", () => finish(new Error(`connection to port ${port} closed`)));
  });
}

/** Parses `INFO`-style text (`field:value` lines) into a record. */
export function infoFields(text: RespValue): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof text !== "string") return out;
  for (const line of text.split(/\r?\n/)) {
    const i = line.indexOf(":");
    if (i > 0 && !line.startsWith("#")) out[line.slice(0, i)] = line.slice(i + 1).trim();
  }
  return out;
}

/** Calls per command (`emq.claim`, `rpoplpush`, …) in `INFO commandstats` text. */
export function commandCalls(text: RespValue): Map<string, number> {
  const calls = new Map<string, number>();
  for (const [k, v] of Object.entries(infoFields(text))) {
    if (!k.startsWith("cmdstat_")) continue;
    const m = /calls=(\d+)/.exec(v);
    if (m) calls.set(k.slice("cmdstat_".length), Number(m[1]));
  }
  return calls;
}

/** Polls `check` every `intervalMs` until it returns true; rejects with `what` after `timeoutMs`. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 30000,
  intervalMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = undefined;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
}
