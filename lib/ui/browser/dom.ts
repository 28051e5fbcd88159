/**
 * The pages' few DOM helpers: an element by id (a page without it is a bug, said at once), an
 * element made with text (never markup), a number set only when it changed.
 *
 * @module
 */

/** The element `#id`; throws when the page has none. */
export const $ = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`the page has no #${id}`);
  return el as T;
};

/** Makes an element with text (never markup) and attributes. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Array<Node | string>
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...children);
  return e;
}

/** Sets a number's text (only when it changed, so a screen reader hears only changes). */
export function setNumber(e: HTMLElement, n: number): void {
  const text = String(n);
  if (e.textContent !== text) e.textContent = text;
  e.dataset.nonzero = String(n > 0);
}
