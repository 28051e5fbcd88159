/**
 * BullMQ's lock tokens on EchoMQ's fenced leases (docs/design/bullmq.md, "Locks"). A BullMQ worker
 * names its own token (`<worker id>:<n>`) when it asks for a job; EchoMQ's CLAIM hands out the
 * fenced token that every settle, extension, progress and log line must present. A backend keeps,
 * per job it claimed, both: the worker's token is checked here (a mismatch is BullMQ's "lock
 * mismatch"), the fenced one goes on the wire, where the server decides — a lease that ran out and
 * was claimed again refuses the old token and writes nothing ("missing lock").
 *
 * @module
 */
import type { JobRef } from "../client/job.ts";

/** One job a backend holds: EchoMQ's reference (id, queue, fenced token) and BullMQ's token for it. */
export interface Held {
  /** EchoMQ's reference, with the fenced token of the claim. */
  readonly ref: JobRef;
  /** The token the BullMQ worker asked with. */
  readonly bullToken: string;
  /** When it was claimed (this machine's clock): BullMQ's `processedOn`. */
  readonly at: number;
}

/** BullMQ's error of a finishing command whose lock is gone or another's (its texts, `finishedErrors`). */
export function lockError(bullId: string, command: string, mismatch: boolean): Error {
  return new Error(
    mismatch ? `Lock mismatch for job ${bullId}. Cmd ${command} from active` : `Missing lock for job ${bullId}. ${command}`,
  );
}

/** Whether `token` asks for no check: none given, or BullMQ's `'0'` (its scripts skip the lock check for it). */
function unchecked(token: string | undefined): boolean {
  return token === undefined || token === "" || token === "0";
}

/** The jobs one backend holds, by BullMQ id. */
export class Locks {
  readonly #held: Map<string, Held> = new Map();

  /** Records a claim. */
  hold(bullId: string, held: Held): void {
    this.#held.set(bullId, held);
  }

  /** The job held under `bullId`, when `token` (if given, and not `'0'`) is the worker's; else undefined. */
  peek(bullId: string, token?: string): Held | undefined {
    const h = this.#held.get(bullId);
    return h !== undefined && (unchecked(token) || h.bullToken === token) ? h : undefined;
  }

  /** The job held under `bullId` for `command`, taken out of the table (it is about to be settled), or BullMQ's lock error. */
  take(bullId: string, token: string | undefined, command: string): Held {
    const h = this.#held.get(bullId);
    if (h === undefined) throw lockError(bullId, command, false);
    if (!unchecked(token) && h.bullToken !== token) throw lockError(bullId, command, true);
    this.#held.delete(bullId);
    return h;
  }

  /** Every job held (for a close: they are released). */
  all(): Held[] {
    return [...this.#held.values()];
  }

  /** Forgets every job. */
  clear(): void {
    this.#held.clear();
  }
}
