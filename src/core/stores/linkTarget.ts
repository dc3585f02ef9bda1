/**
 * How the file driver (file.ts) writes a small record as the target of a symbolic link. The target
 * is the record's text in base64url behind the marker `b64,`: letters, digits, `-`, `_` and one
 * comma, so that no system reads it as a path. Node on Windows rewrites every `/` of a relative link
 * target to `\` (and takes `C:\…` for a path to resolve), which turned a record holding a note like
 * "src/app.ts" into a damaged one there (issue 29). Encoding costs a third more bytes, so fewer
 * records fit a link; the larger ones are published as files, as before.
 *
 * Targets written before the marker existed (the framed text itself, `2:<crc>:<json>`) still read
 * as they are: the framing never begins with the marker.
 */

const MARKER = 'b64,';
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The link target that stands for `text`. */
export function encodeLinkTarget(text: string): string {
  return MARKER + Buffer.from(text, 'utf8').toString('base64url');
}

/** The text a link target stands for; undefined when it is no target this driver writes (damage). */
export function decodeLinkTarget(target: string): string | undefined {
  if (!target.startsWith(MARKER)) return target; // the older form: the text itself
  const encoded = target.slice(MARKER.length);
  if (!BASE64URL.test(encoded)) return undefined;
  const bytes = Buffer.from(encoded, 'base64url');
  // Only the one canonical spelling is accepted: a changed character that decodes the same is damage too.
  if (bytes.toString('base64url') !== encoded) return undefined;
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : undefined;
}
