/**
 * A queue's retention, read once: the six settings of `meta` (dead and completed jobs, events, history)
 * with their fields and defaults ({@link SETTINGS}), and {@link retentionOf}, which reads them
 * from any source of `meta`'s values (an HMGET reply, an HGETALL map).
 *
 * @module
 */
import {
  COMPLETED_AGE_DEFAULT_MS,
  COMPLETED_MAX_DEFAULT,
  DEAD_AGE_DEFAULT_MS,
  DEAD_MAX_DEFAULT,
  EVENTS_MAX_DEFAULT,
  HISTORY_MINUTES_DEFAULT,
  META,
  type MetaField,
} from "../wire/mod.ts";

/**
 * A queue's retention: how many dead jobs it keeps and for how long, the same for completed jobs
 * (with their results), how many events its stream keeps, and how many minutes of history. Each 0
 * means "no limit", but `completedMax` 0 keeps no completed job, `eventsMax` 0 writes no event and
 * `historyMinutes` 0 no history.
 */
export interface Retention {
  /** The most dead jobs kept (0: no limit; default {@link DEAD_MAX_DEFAULT}). */
  readonly deadMax: number;
  /** How long a dead job is kept, in ms (0: no limit; default 30 days). */
  readonly deadAgeMs: number;
  /** The most completed jobs kept with their results (0: none, an ack deletes the job; default {@link COMPLETED_MAX_DEFAULT}). */
  readonly completedMax: number;
  /** How long a completed job is kept, in ms (0: no limit; default one day). */
  readonly completedAgeMs: number;
  /** The most entries of the queue's events stream (0: no events written; default {@link EVENTS_MAX_DEFAULT}). */
  readonly eventsMax: number;
  /**
   * The minutes of per-minute history (`mq.metrics`) the queue keeps, up to 10080 (a week; 0: none
   * written, and what was kept is deleted; default {@link HISTORY_MINUTES_DEFAULT}, a day).
   */
  readonly historyMinutes: number;
}

/** The settings of {@link Retention}: each option's `meta` field and default. */
export const SETTINGS = [
  ["deadMax", META.dead_max, DEAD_MAX_DEFAULT],
  ["deadAgeMs", META.dead_age_ms, DEAD_AGE_DEFAULT_MS],
  ["completedMax", META.completed_max, COMPLETED_MAX_DEFAULT],
  ["completedAgeMs", META.completed_age_ms, COMPLETED_AGE_DEFAULT_MS],
  ["eventsMax", META.events_max, EVENTS_MAX_DEFAULT],
  ["historyMinutes", META.history_minutes, HISTORY_MINUTES_DEFAULT],
] as const satisfies ReadonlyArray<readonly [keyof Retention, MetaField, number]>;

/** `meta`'s stored value of a setting, or its default when absent (or not a whole number ≥ 0). */
function stored(value: unknown, fallback: number): number {
  if (value === null || value === undefined) return fallback;
  const text = value instanceof Uint8Array ? new TextDecoder().decode(value) : String(value);
  const n = Number(text);
  return text !== "" && Number.isSafeInteger(n) && n >= 0 ? n : fallback;
}

/** The settings in force, each read by `read(field)` (`meta`'s value, or absent: its default). */
export function retentionOf(read: (field: string) => unknown): Retention {
  return Object.fromEntries(SETTINGS.map(([name, field, fallback]) => [name, stored(read(field), fallback)])) as unknown as Retention;
}
