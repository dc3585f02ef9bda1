/**
 * git's reading of a boolean setting or option value (`git_parse_maybe_bool`): true, yes, on and
 * false, no, off in any case; an empty value is false; a key without `=` (null here) is true; and
 * any integer git accepts — decimal, octal with a leading 0, hex with 0x, a k/m/g unit, within a
 * C int — is true unless it is 0. Anything else is undefined: git refuses it (for most keys it
 * stops the command). Pure.
 */
export function gitBoolean(value: string | null): boolean | undefined {
  if (value === null) return true;
  if (value === '') return false;
  const word = value.toLowerCase();
  if (word === 'true' || word === 'yes' || word === 'on') return true;
  if (word === 'false' || word === 'no' || word === 'off') return false;
  const number = gitInteger(value);
  return number === undefined ? undefined : number !== 0;
}

const INT_MAX = 2 ** 31 - 1;
const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/**
 * `git_parse_int`: `strtoimax(value, base 0)` — leading white space, a sign, 0x for hex, a leading 0
 * for octal — then nothing but an optional unit (k, m, g in any case), the result within a C int.
 */
export function gitInteger(value: string): number | undefined {
  const match = /^[ \t\n\v\f\r]*([+-]?)(?:0[xX]([0-9a-fA-F]+)|(0[0-7]*)|([1-9][0-9]*))([kKmMgG]?)$/.exec(value);
  if (!match) return undefined;
  const [, sign, hex, octal, decimal, unit] = match;
  const magnitude = hex !== undefined ? parseInt(hex, 16) : octal !== undefined ? parseInt(octal, 8) : parseInt(decimal, 10);
  const factor = UNITS[unit.toLowerCase()];
  // git refuses a value whose product leaves the int's range (its check: max / factor < value).
  if (magnitude > Math.floor(INT_MAX / factor)) return undefined;
  const result = magnitude * factor;
  return sign === '-' ? -result : result;
}
