/**
 * Text as the pages show it: control characters (NUL, tab, newline, DEL, …) made visible as JSON
 * escapes, so a queue name, a key or a reason never hides a byte. The key panel marks the escapes
 * ({@link visiblePieces}); the dashboard shows the text ({@link visible}).
 *
 * @module
 */

/** One piece of displayed text: plain, or a control character shown as its escape. */
export interface Piece {
  readonly text: string;
  readonly escaped: boolean;
}

/** Text with control characters (NUL, tab, newline, DEL, …) made visible as JSON escapes. */
export function visiblePieces(s: string): Piece[] {
  const out: Piece[] = [];
  let plain = "";
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    if (c < 0x20 || c === 0x7f) {
      if (plain) out.push({ text: plain, escaped: false });
      plain = "";
      out.push({ text: c === 0x7f ? "\\x7f" : JSON.stringify(ch).slice(1, -1), escaped: true });
    } else plain += ch;
  }
  if (plain) out.push({ text: plain, escaped: false });
  return out;
}

/** {@link visiblePieces} joined: what the page's text reads for `s`. */
export function visible(s: string): string {
  return visiblePieces(s).map((p) => p.text).join("");
}
