/**
 * Two small waits the worker's roles share: the next macrotask, and a promise with a deadline.
 *
 * @module
 */

/** Runs `task` on the next macrotask (after pending I/O callbacks), in Bun, Node and Deno. */
const immediate = (globalThis as { setImmediate?: (task: () => void) => unknown }).setImmediate;
export const nextMacrotask: (task: () => void) => void = typeof immediate === "function" ? (task) => void immediate(task) : (task) => void setTimeout(task, 0);

/**
 * `promise`, or `fallback` once `ms` pass first — the timer is cleared either way, so nothing it
 * started keeps the process alive.
 */
export function within<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<F>((done) => (timer = setTimeout(() => done(fallback), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
