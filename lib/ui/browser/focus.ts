/**
 * Focus kept across a re-render: before, the focused element's `data-key` and its index among the
 * keyed elements of a scope; after, the element with the same key, else the one now at that
 * index, else a fallback.
 *
 * @module
 */

/** Where focus was in `scope`: the focused element's `data-key`, and its index among keyed ones. */
export interface FocusedKey {
  readonly key: string;
  readonly index: number;
}

/** The focused element's key in `scope`, or null when focus is elsewhere (or on an unkeyed element). */
export function focusedKey(scope: HTMLElement): FocusedKey | null {
  const active = document.activeElement as HTMLElement | null;
  if (active === null || !scope.contains(active) || active.dataset.key === undefined) return null;
  const keyed = Array.from(scope.querySelectorAll<HTMLElement>("[data-key]"));
  return { key: active.dataset.key, index: keyed.indexOf(active) };
}

/** Puts focus back where {@link focusedKey} found it (nothing when it found none). */
export function restoreFocus(scope: HTMLElement, was: FocusedKey | null, fallback: HTMLElement): void {
  if (was === null) return;
  const keyed = Array.from(scope.querySelectorAll<HTMLElement>("[data-key]"));
  const same = keyed.find((e) => e.dataset.key === was.key);
  const near = same ?? keyed[Math.min(was.index, keyed.length - 1)];
  (near ?? fallback).focus();
}
