/**
 * Text a person typed, on its way onto the lock page and back out to other people's screens.
 * Controls are the C0 and C1 control characters (U+0000–U+001F, U+007F–U+009F: a C1 CSI, U+009B,
 * starts a terminal escape sequence) and the Unicode bidirectional controls (U+061C, U+200E,
 * U+200F, U+202A–U+202E, U+2066–U+2069: U+202E reverses the text after it on screen). None of them
 * is ever stored in a note, a reason, a block's text or an identity; readers escape the ones an
 * older client stored. Pure.
 */

const CONTROL = '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';
const CONTROLS = new RegExp(`[${CONTROL}]+`, 'g');
const ANY_CONTROL = new RegExp(`[${CONTROL}]`);
/** Controls other than line feed and tab (which multi-line help texts use). */
const SHOWN_AS_ESCAPES = new RegExp(`[${CONTROL.replace('\\u0000-\\u001f', '\\u0000-\\u0008\\u000b-\\u001f')}]`, 'g');

/** Whether the text holds a control character of any kind (see above). */
export function hasControls(text: string): boolean {
  return ANY_CONTROL.test(text);
}

/** Controls out, whitespace folded, trimmed, at most `max` characters. */
export function cleanText(text: string, max: number): string {
  return text.replace(CONTROLS, ' ').replace(/\s+/g, ' ').trim().slice(0, max);
}

/**
 * For a terminal or a web page: every control but line feed and tab shown as `\u202e` (visible, and
 * inert). Text without controls comes back unchanged.
 */
export function escapeControls(text: string): string {
  return text.replace(SHOWN_AS_ESCAPES, c => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
