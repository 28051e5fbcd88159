/**
 * An action's body: a JSON object sent as `application/json` (a form post or text is refused, so
 * only the page's own script, or a caller that means it, reaches an action).
 *
 * @module
 */
import { ApiError } from "./api_errors.ts";

/** The JSON object `request` carries, or a 415 / 400 saying what is wrong with it. */
export async function body(request: Request): Promise<Record<string, unknown>> {
  if (!(request.headers.get("content-type") ?? "").startsWith("application/json")) {
    throw new ApiError(415, "the body must be JSON (content-type: application/json)");
  }
  let value: unknown;
  try {
    value = await request.json();
  } catch {
    throw new ApiError(400, "the body is not JSON");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new ApiError(400, "the body must be a JSON object");
  return value as Record<string, unknown>;
}
