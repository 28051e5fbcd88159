/**
 * How the dashboard refuses: an {@link ApiError} carries its HTTP status, and {@link failure}
 * turns any error (the client's refusals, a server that did not answer) into a status and one line
 * of text; {@link answerWith} runs a handler so. The JSON API answers with it as `{ error }`, the
 * pages as a problem page.
 *
 * @module
 */
import { validQueue } from "../keyspace/mod.ts";

/** A refusal the API answers with a status and `{ error }`. */
export class ApiError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** Says why, with its status. */
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** `name` as a queue name, or a 400 naming the rule it breaks. */
export function queueName(name: string | null | undefined): string {
  if (typeof name !== "string") throw new ApiError(400, "name: a queue name is required");
  if (!validQueue(name)) throw new ApiError(400, `${JSON.stringify(name)} is not a queue name (no {, } or NUL; well-formed text)`);
  return name;
}

/**
 * An error as an answer's status and text: an {@link ApiError} as it says; the client's refusals
 * of the input (a name it refuses, a limit out of range, a job that is not dead or not scheduled)
 * as 400 and 409; the rest (the server refused or did not answer) as 502.
 */
export function failure(e: unknown): { status: number; text: string } {
  if (e instanceof ApiError) return { status: e.status, text: e.message };
  const text = (e instanceof Error ? e.message : String(e)).split("\n")[0]!;
  const name = (e as { name?: unknown } | null)?.name;
  if (name === "KeyspaceError") return { status: 400, text };
  // a value the client refused before any wire (`mq.limit`'s range checks, a lane name): the caller's to fix
  const rule = (e as { rule?: unknown }).rule;
  if (name === "EchoMQError" && (rule === "limit" || rule === "options")) return { status: 400, text };
  if (name === "JobNotDeadError" || name === "JobNotScheduledError" || name === "JobActiveError") return { status: 409, text };
  return { status: 502, text: `the server refused or did not answer: ${text}` };
}

/** Runs `run`: its value through `ok`, or the status and text {@link failure} gives through `refuse`. */
export async function answerWith<T>(
  run: () => Promise<T>,
  ok: (value: T) => Response,
  refuse: (status: number, text: string) => Response,
): Promise<Response> {
  try {
    return ok(await run());
  } catch (e) {
    const f = failure(e);
    return refuse(f.status, f.text);
  }
}
