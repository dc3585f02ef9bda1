import { LockConfigurationError } from './errors';

/** The lease bounds, in seconds (docs/leases.md#bounds). */
export const TTL_MIN_SECONDS = 1;
export const TTL_MAX_SECONDS = 86_400;
export const WAIT_MIN_SECONDS = 0;
export const WAIT_MAX_SECONDS = 60;
/**
 * A lease handle's contention retries (leases.ts) sleep at most this long at a time. A container page's
 * lost compare-and-swap races back off by their own rule instead (container/casBackoff.ts).
 */
export const MAX_RETRY_SLEEP_MS = 25;

export function assertTtl(ttl: unknown, setting = 'ttl'): asserts ttl is number {
  if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl < TTL_MIN_SECONDS || ttl > TTL_MAX_SECONDS) {
    throw new LockConfigurationError(
      `The ${setting} must be a number of seconds from ${TTL_MIN_SECONDS} to ${TTL_MAX_SECONDS}; split longer work or renew the lease.`,
      { setting },
    );
  }
}

export function assertWait(wait: unknown, setting = 'wait'): asserts wait is number {
  if (typeof wait !== 'number' || !Number.isFinite(wait) || wait < WAIT_MIN_SECONDS || wait > WAIT_MAX_SECONDS) {
    throw new LockConfigurationError(`The ${setting} must be a number of seconds from ${WAIT_MIN_SECONDS} to ${WAIT_MAX_SECONDS}.`, {
      setting,
    });
  }
}

/**
 * Parses a command-line TTL: a whole number of seconds within the bounds (seed 003's `int $ttl`,
 * 1–86,400; a container lock's grant: the pure rule's, lockRecord.ts). A fraction ("1.5") is a usage
 * error, never rounded.
 */
export function parseTtlSeconds(
  text: string,
  setting = 'ttl',
  bounds: { readonly min: number; readonly max: number } = { min: TTL_MIN_SECONDS, max: TTL_MAX_SECONDS },
): number {
  const ttl = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!(ttl >= bounds.min && ttl <= bounds.max)) {
    throw new LockConfigurationError(
      `The ${setting} must be a whole number of seconds from ${bounds.min} to ${bounds.max}, e.g. ${Math.max(30, bounds.min)}; split longer work or renew the lease.`,
      { setting },
    );
  }
  return ttl;
}

/** Parses a command-line or environment number of seconds; throws a configuration error naming the setting. */
export function parseSeconds(text: string, setting: string): number {
  const trimmed = text.trim();
  if (!/^\d+(?:\.\d+)?$/.test(trimmed)) {
    throw new LockConfigurationError(`The ${setting} must be a number of seconds, e.g. 30.`, { setting });
  }
  return Number(trimmed);
}
