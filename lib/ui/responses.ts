/**
 * The server's answers and the escaping they rely on: HTML with every piece of user data through
 * {@link esc}, JSON through {@link safeJson}, and plain text, each with its content type.
 *
 * @module
 */

/** Escapes text for HTML content and attribute values. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON text safe anywhere: `<`, `>`, `&`, U+2028 and U+2029 as `\u` escapes. */
export function safeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** An answer of `body` with its content type. */
export function answer(body: BodyInit, contentType: string, status = 200): Response {
  return new Response(body, { status, headers: { "content-type": contentType } });
}

/** An HTML answer. */
export function html(text: string, status = 200): Response {
  return answer(text, "text/html; charset=utf-8", status);
}

/** A JSON answer ({@link safeJson}). */
export function json(value: unknown, status = 200): Response {
  return answer(safeJson(value), "application/json; charset=utf-8", status);
}

/** A one-line plain-text answer. */
export function plain(status: number, text: string): Response {
  return answer(`${text}\n`, "text/plain; charset=utf-8", status);
}
