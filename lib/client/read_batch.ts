/**
 * A non-atomic batch of reads, sent again while a command of it is refused with a redirection.
 * `Connection.command` and `Connection.script` send a call again while it is refused with a
 * redirection that guarantees it did not run (MOVED, ASK, TRYAGAIN, CLUSTERDOWN, LOADING, READONLY,
 * MASTERDOWN: {@link retryable}); `Connection.batch` does not — a non-atomic batch gives each
 * command's error in its place, as a value, and glide's own redirection of a pipeline does not cover
 * a failover (a worker's `onError` got `ZRANGE refused (other): MOVED …` from the scheduler step).
 * Sending a whole batch again is safe only when it writes nothing: hence reads only.
 *
 * @module
 */
import { type BatchReply, retryable, retryDelay } from "./connection.ts";

/** How many times a batch of reads is sent in all while a command of it is redirected (about 0.25 s of backoff). */
export const READ_BATCH_TRIES = 8;

const sleep = (ms: number): Promise<void> => new Promise((wake) => setTimeout(wake, ms));

/**
 * The replies of the batch `send` sends, sent again with backoff (2, 4, 8 … ms) while one of its
 * replies is a redirection ({@link retryable}), at most `tries` times in all; the last replies
 * otherwise, their errors the caller's to report (a refusal that is not a redirection at once).
 * `send` must only read: every command of the batch runs again.
 */
export async function readBatch(send: () => Promise<BatchReply>, tries: number = READ_BATCH_TRIES): Promise<BatchReply> {
  for (let attempt = 0;; attempt++) {
    const replies = await send();
    if (attempt + 1 >= tries || !replies.some(retryable)) return replies;
    await sleep(retryDelay(attempt));
  }
}
