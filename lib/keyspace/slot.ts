/**
 * Cluster routing: {@link hashtag} and {@link slot} (CRC16-XMODEM over UTF-8 bytes), the cluster's own rule.
 *
 * @module
 */
/** Number of hash slots in a Valkey Cluster. */
export const SLOTS = 16384;

// CRC16-XMODEM (poly 0x1021, init 0), the cluster's key hash, one table lookup per byte.
const TABLE = /* @__PURE__ */ (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let b = 0; b < 8; b++) c = c & 0x8000 ? (c << 1) ^ 0x1021 : c << 1;
    t[i] = c & 0xffff;
  }
  return t;
})();

function crcByte(crc: number, byte: number): number {
  return ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff];
}

// CRC16 of the UTF-8 encoding of s[from, to), encoded on the fly (no allocation). Lone
// surrogates count as U+FFFD, as TextEncoder encodes them.
function crcString(s: string, from: number, to: number): number {
  let crc = 0;
  for (let i = from; i < to; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      crc = crcByte(crc, c);
      continue;
    }
    if (c < 0x800) {
      crc = crcByte(crcByte(crc, 0xc0 | (c >> 6)), 0x80 | (c & 0x3f));
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = i + 1 < to ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        crc = crcByte(crc, 0xf0 | (c >> 18));
        crc = crcByte(crc, 0x80 | ((c >> 12) & 0x3f));
        crc = crcByte(crc, 0x80 | ((c >> 6) & 0x3f));
        crc = crcByte(crc, 0x80 | (c & 0x3f));
        continue;
      }
      c = 0xfffd;
    }
    crc = crcByte(crc, 0xe0 | (c >> 12));
    crc = crcByte(crc, 0x80 | ((c >> 6) & 0x3f));
    crc = crcByte(crc, 0x80 | (c & 0x3f));
  }
  return crc;
}

function crcBytes(b: Uint8Array, from: number, to: number): number {
  let crc = 0;
  for (let i = from; i < to; i++) crc = crcByte(crc, b[i]);
  return crc;
}

// The span the cluster hashes: between the first `{` and the next `}` when non-empty, else all.
// `{` and `}` are ASCII, so UTF-16 indexes find the same span as UTF-8 bytes would.
function tagSpan(key: string | Uint8Array): [number, number] | null {
  if (typeof key === "string") {
    const open = key.indexOf("{");
    if (open < 0) return null;
    const close = key.indexOf("}", open + 1);
    return close > open + 1 ? [open + 1, close] : null;
  }
  const open = key.indexOf(0x7b);
  if (open < 0) return null;
  const close = key.indexOf(0x7d, open + 1);
  return close > open + 1 ? [open + 1, close] : null;
}

/**
 * The hashtag of a key by the cluster's rule — the bytes between the first `{` and the next `}`
 * when that span is non-empty — or `null` when the whole key is hashed (no tag, or an empty `{}`).
 */
export function hashtag(key: string | Uint8Array): string | null {
  const span = tagSpan(key);
  if (span === null) return null;
  return typeof key === "string" ? key.slice(span[0], span[1]) : new TextDecoder().decode(key.subarray(span[0], span[1]));
}

/**
 * The cluster slot (0…16383) of a key: CRC16-XMODEM of its hashtag, or of the whole key when it
 * has none, over UTF-8 bytes. Computed from the key on every call; `keyspace(q).slot` is cached.
 */
export function slot(key: string | Uint8Array): number {
  const span = tagSpan(key);
  const from = span ? span[0] : 0;
  const to = span ? span[1] : key.length;
  return (typeof key === "string" ? crcString(key, from, to) : crcBytes(key, from, to)) & (SLOTS - 1);
}
