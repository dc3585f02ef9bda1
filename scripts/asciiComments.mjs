// The bundles dist/cli.js loads through V8's code cache are read on every command and every hook run. esbuild
// writes their code in ASCII (its default charset escapes strings, template literals and identifiers) but keeps
// some comments as written (those in class bodies and object literals), and a few of ours hold a dash or an
// ellipsis: one such character makes Node read the whole file as a two-byte string, twice the memory to decode,
// wrap and compile on every start (2-4 ms of each `lockstep status` on a 2-core machine). So those
// characters become ASCII stand-ins, one UTF-16 unit for one, which keeps every line and column of the source map.

/** Stand-ins for the characters our comments use; any other one becomes '?'. */
const STAND_INS = new Map([
  ['\u2014', '-'],
  ['\u2013', '-'],
  ['\u2026', '.'],
  ['\u2192', '>'],
  ['\u2190', '<'],
  ['\u00d7', 'x'],
  ['\u00b7', '.'],
  ['\u2264', '<'],
  ['\u2265', '>'],
  ['\u201c', '"'],
  ['\u201d', '"'],
  ['\u2018', "'"],
  ['\u2019', "'"],
]);

/** A character outside ASCII (one UTF-16 unit: each half of a surrogate pair is one, and gets one stand-in). */
const NON_ASCII = /[\u0080-\uffff]/;

/** Whether `code` has a character outside ASCII (and so needs {@link asciiComments}). */
export function hasNonAscii(code) {
  return NON_ASCII.test(code);
}

/**
 * `code` (esbuild's output with its default ASCII charset) with every non-ASCII character of its comments replaced
 * by an ASCII one of the same length; unchanged when one is outside a comment. `withoutComments` is `code` as esbuild
 * prints it with comments dropped (a transform with minifyWhitespace and legalComments 'none'): with escaped strings
 * and identifiers, a non-ASCII character left there is in a regular expression literal, which esbuild prints as
 * written and which must not change. Returns the text and whether it is now ASCII.
 */
export function asciiComments(code, withoutComments) {
  if (!hasNonAscii(code)) return { code, ascii: true };
  if (hasNonAscii(withoutComments)) return { code, ascii: false };
  return { code: code.replace(new RegExp(NON_ASCII.source, 'g'), ch => STAND_INS.get(ch) ?? '?'), ascii: true };
}

/**
 * A launched bundle's `text` as esbuild wrote it, with ASCII comments (asciiComments), checked against `esbuild`'s own
 * reading of it without comments. scripts/build.mjs lands dist/'s launched bundles so, and test/helpers/gitFixture.ts
 * the command line the tests run, so that they test what ships.
 */
export async function asciiBundle(esbuild, text) {
  if (!hasNonAscii(text)) return { code: text, ascii: true };
  const { code } = await esbuild.transform(text, { loader: 'js', minifyWhitespace: true, legalComments: 'none' });
  return asciiComments(text, code);
}
