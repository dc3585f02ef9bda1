import { crc32Hex } from './crc32';

/**
 * How a lease slot's log (fileSlotLog.ts) frames its records, and how a reader tells a record cut
 * short by a crash from damage. Pure: text in, verdict out.
 *
 * A record is a 32-byte header and a body, all ASCII (the body is JSON with every other character
 * escaped, and JSON holds no raw newline, so `\n` occurs only where a record starts):
 *
 *     \n@v2 <length> <body crc> <header crc> <body>
 *
 * `<length>` is the body's length and `<body crc>` its CRC-32, each 8 hex digits; `<header crc>` is
 * the CRC-32 of the 23 bytes before it (`\n@v2 <length> <body crc> `). The header's own checksum
 * is what lets a reader trust the length before it trusts the body: without it, one damaged
 * length digit would make a complete record look cut short.
 *
 * The rule (issue #23, "damage is damage"):
 * - The text ending inside a record (a prefix of a well-formed record) is `incomplete`: a record
 *   still arriving, or an append torn by a crash at the very end of the log. The reader stays at the
 *   state before it.
 * - A record cut short and followed by more appends is `torn`, and skipped: it is recognised by a
 *   verified header starting inside its extent — exactly what a writer killed in the middle of its
 *   write(2) (or refused part of it by a full disk) leaves once others have appended after it. No
 *   reader ever applied it, since no reader could read it whole.
 * - Anything else that does not verify is `damaged`: a complete record whose checksums do not match,
 *   bytes that are no record, a header that is not well-formed. The caller raises LockStorageError;
 *   damage is never skipped, so it can never make a live lease read as free.
 *
 * Logs written before this framing (`\n@<decimal length>:<JSON>`, no checksum) are read by
 * {@link nextLegacyRecord} only to carry their state into a new log (see fileSlotLog.ts).
 */

export const HEADER_BYTES = 32;
/** A record larger than this is damage. */
export const MAX_RECORD_BYTES = 1024 * 1024;
const MAGIC = '\n@v2 ';
const MARK = '\n@';
/** What a header looks like, and what any prefix of one may hold, position by position. */
const HEADER_SHAPE = /^\n@v2 [0-9a-f]{8} [0-9a-f]{8} [0-9a-f]{8} $/;

export type Framed =
  /** A verified record ending at `end`; `json` is its body. */
  | { readonly kind: 'record'; readonly end: number; readonly json: string }
  /** A record cut short; the next record starts at `end`. */
  | { readonly kind: 'torn'; readonly end: number }
  /** The text ends inside a record: wait for more, or (at the end of the log) a torn append. */
  | { readonly kind: 'incomplete' }
  /** Not a record, or one that does not verify. `what` says which (no record content). */
  | { readonly kind: 'damaged'; readonly what: string };

/** The framed record for `json` (ASCII, no newline). */
export function encodeRecord(json: string): string {
  const start = `${MAGIC}${hex8(json.length)} ${crc32Hex(json)} `;
  return `${start}${crc32Hex(start)} ${json}`;
}

/** Which framing a log uses, from its first bytes; undefined while too few bytes are there to say. */
export function logFormat(text: string): 'v2' | 'legacy' | 'damaged' | undefined {
  if (text.length < 3) return MARK.startsWith(text) ? undefined : 'damaged';
  if (!text.startsWith(MARK)) return 'damaged';
  if (/^[0-9]$/.test(text[2])) return 'legacy';
  if (text.length < MAGIC.length) return MAGIC.startsWith(text) ? undefined : 'damaged';
  return text.startsWith(MAGIC) ? 'v2' : 'damaged';
}

/** The record at the start of `text`, which must be where a record starts. */
export function nextRecord(text: string): Framed {
  // A header not all there: cut short by a crash (another record starts inside it), or still arriving.
  const inside = text.indexOf(MARK, 1);
  if (inside >= 0 && inside < HEADER_BYTES) {
    return isHeaderPrefix(text.slice(0, inside)) ? followedBy(text, inside) : { kind: 'damaged', what: 'bytes that are not a record' };
  }
  if (text.length < HEADER_BYTES)
    return isHeaderPrefix(text) ? { kind: 'incomplete' } : { kind: 'damaged', what: 'bytes that are not a record' };
  const header = text.slice(0, HEADER_BYTES);
  if (!HEADER_SHAPE.test(header)) return { kind: 'damaged', what: 'a record header that is not well-formed' };
  if (crc32Hex(header.slice(0, 23)) !== header.slice(23, 31))
    return { kind: 'damaged', what: 'a record header whose checksum does not match' };
  const length = Number.parseInt(header.slice(5, 13), 16);
  if (length > MAX_RECORD_BYTES) return { kind: 'damaged', what: 'a record longer than any this driver writes' };
  const end = HEADER_BYTES + length;
  const next = text.indexOf(MARK, HEADER_BYTES);
  if (next >= 0 && next < end) return followedBy(text, next);
  if (end > text.length) return { kind: 'incomplete' };
  const json = text.slice(HEADER_BYTES, end);
  if (crc32Hex(json) !== header.slice(14, 22)) return { kind: 'damaged', what: 'a record whose checksum does not match' };
  return { kind: 'record', end, json };
}

/** A record cut off at `next`: torn when a verified header starts there. */
function followedBy(text: string, next: number): Framed {
  const rest = text.slice(next, next + HEADER_BYTES);
  if (rest.length < HEADER_BYTES)
    return isHeaderPrefix(rest) ? { kind: 'incomplete' } : { kind: 'damaged', what: 'bytes that are not a record' };
  if (HEADER_SHAPE.test(rest) && crc32Hex(rest.slice(0, 23)) === rest.slice(23, 31)) return { kind: 'torn', end: next };
  return { kind: 'damaged', what: 'a record cut short and followed by bytes that are not a record' };
}

/** Whether `text` (shorter than a header) is how a header starts. */
function isHeaderPrefix(text: string): boolean {
  const sample = `${MAGIC}00000000 00000000 00000000 `;
  return HEADER_SHAPE.test(text + sample.slice(text.length));
}

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/**
 * A record of the earlier framing, `\n@<decimal length>:<JSON>`, at the start of `text`. It has no
 * checksum, so a damaged byte that still parses cannot be told apart; everything that can be told
 * is: a record must end exactly where the next one starts (or at the end of the text) and parse,
 * and only a record whose declared length runs past the next record's start counts as cut short.
 */
export function nextLegacyRecord(text: string): Framed {
  if (!text.startsWith(MARK))
    return text.length < MARK.length && MARK.startsWith(text)
      ? { kind: 'incomplete' }
      : { kind: 'damaged', what: 'bytes that are not a record' };
  const next = text.indexOf(MARK, 1);
  const colon = text.indexOf(':', 2);
  if (colon < 0 || (next >= 0 && next < colon)) {
    if (next >= 0) return { kind: 'torn', end: next };
    return /^\d{0,8}$/.test(text.slice(2)) ? { kind: 'incomplete' } : { kind: 'damaged', what: 'a record header that is not well-formed' };
  }
  if (!/^\d{1,8}$/.test(text.slice(2, colon))) return { kind: 'damaged', what: 'a record header that is not well-formed' };
  const length = Number(text.slice(2, colon));
  if (length > MAX_RECORD_BYTES) return { kind: 'damaged', what: 'a record longer than any this driver writes' };
  const end = colon + 1 + length;
  if (next >= 0 && next < end) return { kind: 'torn', end: next };
  if (end > text.length) return { kind: 'incomplete' };
  return { kind: 'record', end, json: text.slice(colon + 1, end) };
}
