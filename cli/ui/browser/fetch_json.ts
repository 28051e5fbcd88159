/**
 * The JSON API from the page: a GET or a same-origin POST whose answer is the value, or an error
 * carrying the API's `{ error }` text.
 *
 * @module
 */
import type { ErrorReply } from "../../../lib/ui/json_api.ts";

/** The API answered with an error status; the message is its `{ error }`. */
class HttpError extends Error {}

/** `GET url`: its JSON value, or an {@link HttpError}. */
export async function getJson<T>(url: string): Promise<T> {
  const r = await fetch(url, { headers: { accept: "application/json" } });
  const value = (await r.json()) as T | ErrorReply;
  if (!r.ok) throw new HttpError((value as ErrorReply).error ?? `${url}: ${r.status}`);
  return value as T;
}

/** `POST url` with `payload` as JSON: the answer's JSON value, or an {@link HttpError}. */
export async function postJson<T>(url: string, payload: unknown): Promise<T> {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(payload) });
  const value = (await r.json().catch(() => ({ error: `${url}: ${r.status}` }))) as T | ErrorReply;
  if (!r.ok) throw new HttpError((value as ErrorReply).error ?? `${url}: ${r.status}`);
  return value as T;
}
