/**
 * The JSON API from the page: a GET or a same-origin POST whose answer is the value, or an error
 * carrying the API's `{ error }` text. A GET that overlapped a POST of this page (sent while one
 * was on its way, or answered after one began) may describe the state before that change: it
 * throws {@link StaleReply} instead of drawing it (a periodic refresh that left just before an
 * action would otherwise redraw what the action changed, e.g. re-enable a Remove button); the
 * refresh each action runs once it is answered draws the new state.
 *
 * @module
 */
import type { ErrorReply } from "../json_api.ts";

/** The API answered with an error status; the message is its `{ error }`. */
class HttpError extends Error {}

/** A GET's reply that may predate a change this page made meanwhile: not drawn. */
export class StaleReply extends Error {}

/** POSTs begun and ended (each counts twice), and how many are on their way. */
let writes = 0;
let writing = 0;

/** `GET url`: its JSON value, or an {@link HttpError}; {@link StaleReply} when it overlapped a POST. */
export async function getJson<T>(url: string): Promise<T> {
  const at = writing > 0 ? -1 : writes;
  const r = await fetch(url, { headers: { accept: "application/json" } });
  const value = (await r.json()) as T | ErrorReply;
  if (at !== writes) throw new StaleReply(`${url}: overlapped a change`);
  if (!r.ok) throw new HttpError((value as ErrorReply).error ?? `${url}: ${r.status}`);
  return value as T;
}

/** `POST url` with `payload` as JSON: the answer's JSON value, or an {@link HttpError}. */
export async function postJson<T>(url: string, payload: unknown): Promise<T> {
  writes++;
  writing++;
  try {
    const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(payload) });
    const value = (await r.json().catch(() => ({ error: `${url}: ${r.status}` }))) as T | ErrorReply;
    if (!r.ok) throw new HttpError((value as ErrorReply).error ?? `${url}: ${r.status}`);
    return value as T;
  } finally {
    writing--;
    writes++;
  }
}
