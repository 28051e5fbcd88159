/**
 * The Lua twin of the wire verbs: one script per verb, with the same keys, arguments, checks,
 * replies and error texts as the native module (docs/WIRE.md). Steps 1–4 of every script are
 * generated from the wire spec (`lib/wire`); each verb's file holds its steps 5–6 only. The Lua
 * ships as string constants, so nothing is read from disk at run time.
 *
 * @module
 */
import type { Verb } from "../wire/mod.ts";
import { ACK_LUA } from "./ack.ts";
import { BURY_LUA } from "./bury.ts";
import { CLAIM_LUA } from "./claim.ts";
import { DROP_LUA } from "./drop.ts";
import { ENQUEUE_LUA } from "./enqueue.ts";
import { EXTEND_LUA } from "./extend.ts";
import { LIMIT_LUA } from "./limit.ts";
import { PAUSE_LUA } from "./pause.ts";
import { PENALIZE_LUA } from "./penalize.ts";
import { PROGRESS_LUA } from "./progress.ts";
import { PROMOTE_LUA } from "./promote.ts";
import { REAP_LUA } from "./reap.ts";
import { RELEASE_LUA } from "./release.ts";
import { REMOVE_LUA } from "./remove.ts";
import { REQUEUE_LUA } from "./requeue.ts";
import { RESUME_LUA } from "./resume.ts";
import { RETAIN_LUA } from "./retain.ts";
import { RETRY_LUA } from "./retry.ts";
import { RUN_LUA } from "./run.ts";
import { SCHEDULE_LUA } from "./schedule.ts";
import { SCHEDULER_LUA } from "./scheduler.ts";
import { SETTLE_LUA } from "./settle.ts";
import { TICK_LUA } from "./tick.ts";
import { UNSCHEDULE_LUA } from "./unschedule.ts";

export { luaHead, luaScript, PRELUDE } from "./_prelude.ts";

/** Every verb's Lua source, by verb. */
export const SCRIPTS: Readonly<Record<Verb, string>> = Object.freeze({
  ENQUEUE: ENQUEUE_LUA,
  SCHEDULE: SCHEDULE_LUA,
  CLAIM: CLAIM_LUA,
  ACK: ACK_LUA,
  RETRY: RETRY_LUA,
  BURY: BURY_LUA,
  RELEASE: RELEASE_LUA,
  EXTEND: EXTEND_LUA,
  PROGRESS: PROGRESS_LUA,
  REMOVE: REMOVE_LUA,
  REQUEUE: REQUEUE_LUA,
  RUN: RUN_LUA,
  PAUSE: PAUSE_LUA,
  RESUME: RESUME_LUA,
  LIMIT: LIMIT_LUA,
  PENALIZE: PENALIZE_LUA,
  RETAIN: RETAIN_LUA,
  DROP: DROP_LUA,
  PROMOTE: PROMOTE_LUA,
  REAP: REAP_LUA,
  SCHEDULER: SCHEDULER_LUA,
  UNSCHEDULE: UNSCHEDULE_LUA,
  TICK: TICK_LUA,
  SETTLE: SETTLE_LUA,
});
