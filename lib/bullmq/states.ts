/**
 * BullMQ's job states on EchoMQ's (docs/design/bullmq.md, "States"): `wait` and `prioritized` are
 * EchoMQ's `pending` (a priority other than 0 is `prioritized`), `delayed` is `scheduled`, `failed`
 * is `dead`, `waiting-children` is a flow parent's `waiting`.
 *
 * @module
 */
import type { JobState } from "../client/info.ts";

/** A BullMQ state as `Job.getState` names it. */
export type BullState = "completed" | "failed" | "delayed" | "active" | "waiting" | "waiting-children" | "prioritized";

/** The BullMQ state of a row in EchoMQ state `state` (a `waiting` flow parent included) with priority `priority`. */
export function bullState(state: JobState | "waiting", priority: number | undefined): BullState {
  switch (state) {
    case "pending":
      return (priority ?? 0) > 0 ? "prioritized" : "waiting";
    case "active":
      return "active";
    case "scheduled":
      return "delayed";
    case "dead":
      return "failed";
    case "completed":
      return "completed";
    case "waiting":
    case "waiting-children":
      return "waiting-children";
  }
}

/** BullMQ's name for a state or a job type (`wait` and `waiting` are one; `paused` is waiting on a paused queue). */
export function normalType(type: string): string {
  return type === "wait" ? "waiting" : type;
}
