import { inspect } from 'node:util';

/**
 * Keeping credentials out of every printout: a value shown by `util.inspect`, `JSON.stringify`, a
 * spread or a logger must never carry a password or an owner token (docs/leases.md#secrets).
 */

/** The symbol `util.inspect` calls; exported so that classes can name it in one place. */
export const inspectCustom: typeof inspect.custom = inspect.custom;

/** A connection URL as it may be printed: the password (if any) replaced by `***`; unreadable text hidden whole. */
export function redactUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return redactMultiHostUrl(url) ?? '<redacted>';
  }
  if (parsed.password !== '') parsed.password = '***';
  return parsed.href;
}

/**
 * `redis-sentinel://` and `redis-cluster://` URLs name several hosts, which WHATWG URL cannot parse:
 * their password (if any) is replaced by `***`. Anything else gives undefined (hidden whole).
 */
function redactMultiHostUrl(url: string): string | undefined {
  const match = /^(redis-(?:sentinel|cluster):\/\/)(?:([^@/?#:]*)(:[^@/?#]*)?@)?([^@]*)$/i.exec(url);
  if (!match) return undefined;
  const [, scheme, user, password, rest] = match;
  return `${scheme}${user !== undefined ? `${user}${password !== undefined ? ':***' : ''}@` : ''}${rest}`;
}

/** `Name { …fields }` as `util.inspect` would print it, for a `[inspect.custom]` that shows only `fields`. */
export function inspectAs(name: string, fields: object, depth: number, options: object): string {
  return `${name} ${inspect(fields, { ...options, depth })}`;
}
