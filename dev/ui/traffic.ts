/**
 * What `emq ui` runs against the embedded server it starts: `emq demo`'s producers and workers
 * ({@link startTraffic}), in-process and quiet, at a pace a person can watch, on queues of its own.
 *
 * @module
 */
import type { EchoMQ } from "../../client.ts";
import { type Pace, type Payload, startTraffic, type Traffic } from "../demo.ts";

/** The queues `emq ui` drives (name → share of attempts that fail at random). */
export const UI_QUEUES: Readonly<Record<string, number>> = {
  "ui:orders": 0.05,
  "ui:emails": 0.2,
  "ui:reports": 0.02,
};

/** About 40 jobs a second per queue, handlers of 10–120 ms, some poison; never a runaway backlog. */
export const UI_PACE: Pace = {
  batch: 10,
  pauseMs: 250,
  poisonEvery: 60,
  concurrency: 4,
  handlerMs: () => 10 + Math.random() * 110,
  maxPending: 2000,
  onError: () => {},
  onProducerError: () => {},
};

/** Starts the traffic; `stop()` ends it (producers first, then the workers). */
export function startUiTraffic(mq: EchoMQ<unknown>, queues: Readonly<Record<string, number>> = UI_QUEUES): Traffic {
  return startTraffic(mq as EchoMQ<Payload>, queues, UI_PACE);
}
