import { LockConfigurationError } from './errors';
import { sha256Hex } from './tokens';

/** docs/leases.md#names: 1–200 ASCII bytes, `[A-Za-z0-9][A-Za-z0-9:._-]*`. */
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9:._-]*$/;
export const MAX_NAME_BYTES = 200;

/** Prefixes (namespaces) follow the name rule too, but may be empty. */
const PREFIX_PATTERN = /^(?:[A-Za-z0-9][A-Za-z0-9:._-]*)?$/;
export const MAX_PREFIX_BYTES = 200;

/** Throws {@link LockConfigurationError} (without echoing the name) unless `name` is a valid lock name. */
export function assertValidName(name: unknown): asserts name is string {
  if (typeof name !== 'string') {
    throw new LockConfigurationError('The lock name must be a string.', { setting: 'name' });
  }
  if (name.length === 0) {
    throw new LockConfigurationError('The lock name is empty: give 1 to 200 characters from A-Z a-z 0-9 : . _ -.', { setting: 'name' });
  }
  if (name.length > MAX_NAME_BYTES) {
    throw new LockConfigurationError(`The lock name is ${name.length} characters long; the limit is ${MAX_NAME_BYTES}.`, {
      setting: 'name',
    });
  }
  if (!NAME_PATTERN.test(name)) {
    throw new LockConfigurationError(
      'The lock name has a character that is not allowed: use A-Z a-z 0-9 and : . _ - only, starting with a letter or digit (no separators, wildcards, spaces or control characters).',
      { setting: 'name' },
    );
  }
}

export function assertValidPrefix(prefix: unknown, setting = 'prefix'): asserts prefix is string {
  if (typeof prefix !== 'string' || prefix.length > MAX_PREFIX_BYTES || !PREFIX_PATTERN.test(prefix)) {
    throw new LockConfigurationError(
      `The ${setting} must be at most ${MAX_PREFIX_BYTES} characters from A-Z a-z 0-9 : . _ -, starting with a letter or digit.`,
      { setting },
    );
  }
}

/**
 * The only form in which a name reaches a backend: SHA-256 over the namespace and the name, hex.
 * The NUL separator cannot occur in either part, so (a, bc) and (ab, c) never collide.
 */
export function keyDigest(prefix: string, name: string): string {
  return sha256Hex(`${prefix}\0${name}`);
}

/** SHA-256 of a namespace alone, used for per-namespace folders and channels. */
export function namespaceDigest(prefix: string): string {
  return sha256Hex(`lockstep-namespace\0${prefix}`);
}
