/**
 * A queue's schedulers as the dashboard and `emq inspect` show them: the spec and the missed-run
 * policy in words, each scheduler as a row of the queue page (json_api.ts).
 *
 * @module
 */
import type { EchoMQ, MissedPolicy, RepeatSpec } from "../client/mod.ts";
import type { SchedulerRow } from "./json_api.ts";

/** A spec in words, as the client reports it: `cron "0 9 * * *" tz Europe/Paris`, `every 60000 ms`. */
export function specWords(spec: RepeatSpec | null): string {
  if (spec === null) return "a spec this client cannot read";
  if ("everyMs" in spec) return `every ${spec.everyMs} ms`;
  return `cron ${JSON.stringify(spec.cron)}${spec.tz === undefined ? "" : ` tz ${spec.tz}`}`;
}

/** A missed-run policy in words: `latest`, `skip`, `max N`. */
export function missedWords(policy: MissedPolicy): string {
  return typeof policy === "string" ? policy : `max ${policy.max}`;
}

/** Queue `name`'s schedulers as rows, by next run. */
export async function schedulerRows(mq: EchoMQ<unknown>, name: string): Promise<SchedulerRow[]> {
  return (await mq.schedulers(name)).map((s) => ({
    name: s.name,
    spec: specWords(s.spec),
    nextRun: s.nextRun.getTime(),
    ...(s.lastRun === null ? {} : { lastRun: s.lastRun.getTime() }),
    runs: s.runs,
    missed: missedWords(s.missed),
  }));
}
