/**
 * The Lua twin of the wire-4 verbs: one script per verb, with the same keys, arguments, checks,
 * replies and error texts as the native module (docs/WIRE.md). The Lua ships as string constants,
 * so nothing is read from disk at run time.
 *
 * @module
 */
import { ACK_LUA } from "./ack.ts";
import { BURY_LUA } from "./bury.ts";
import { CLAIM_LUA } from "./claim.ts";
import { ENQUEUE_LUA } from "./enqueue.ts";
import { PROMOTE_LUA } from "./promote.ts";
import { REAP_LUA } from "./reap.ts";
import { RETRY_LUA } from "./retry.ts";
import { SCHEDULE_LUA } from "./schedule.ts";

export { ACK_LUA, BURY_LUA, CLAIM_LUA, ENQUEUE_LUA, PROMOTE_LUA, REAP_LUA, RETRY_LUA, SCHEDULE_LUA };
export { MAX_PAYLOAD_BYTES, MAX_REASON_BYTES } from "./_lua.ts";

/** The wire-4 verbs, as they appear after `EMQ.`. */
export type Verb = "ENQUEUE" | "SCHEDULE" | "PROMOTE" | "CLAIM" | "ACK" | "RETRY" | "BURY" | "REAP";

/** Every verb's Lua source, by verb. */
export const SCRIPTS: Readonly<Record<Verb, string>> = Object.freeze({
  ENQUEUE: ENQUEUE_LUA,
  SCHEDULE: SCHEDULE_LUA,
  PROMOTE: PROMOTE_LUA,
  CLAIM: CLAIM_LUA,
  ACK: ACK_LUA,
  RETRY: RETRY_LUA,
  BURY: BURY_LUA,
  REAP: REAP_LUA,
});
