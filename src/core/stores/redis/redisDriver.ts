import type { ResolvedConfig } from '../../config';
import { LockConfigurationError } from '../../errors';
import type { CasMeta, CasResult, ClaimResult, Disposable, Driver, ReleaseResult, VersionedRecord } from '../store';
import { DEFAULT_REDIS_URL, RedisConnection } from './connection';
import { redisKeys, type RedisKeys } from './keys';
import { claimLease, extendLease, releaseLease } from './leaseScripts';
import { compareAndSwapRecord, readRecord } from './recordScripts';
import { RecordWatcher } from './watcher';

/**
 * The `redis` driver: every operation is one round trip (a Lua script or a single read), keys are
 * `<prefix>:<kind>:<digest>`, and record changes are announced over pub/sub. An outage fails each
 * operation with `LockBackendError`; the driver never falls back to another one.
 */
export class RedisDriver implements Driver {
  readonly name = 'redis';
  readonly distributed = true;
  private readonly keys: RedisKeys;
  #watcher: RecordWatcher | undefined;
  private closed = false;
  /** Private, so that printing the driver never shows the connection's URL or password. */
  readonly #connection: RedisConnection;

  constructor(connection: RedisConnection, prefix: string) {
    this.#connection = connection;
    this.keys = redisKeys(prefix);
  }

  claim(key: string, ownerHash: string, ttlMs: number, now: number): Promise<ClaimResult> {
    const lease = this.keys.lease(key);
    const fence = this.keys.fence(key);
    return this.#connection.run(client => claimLease(client, lease, fence, ownerHash, wholeMs(ttlMs), now));
  }

  extend(key: string, ownerHash: string, ttlMs: number, _now: number): Promise<boolean> {
    const lease = this.keys.lease(key);
    return this.#connection.run(client => extendLease(client, lease, ownerHash, wholeMs(ttlMs)));
  }

  release(key: string, ownerHash: string, _now: number): Promise<ReleaseResult> {
    const lease = this.keys.lease(key);
    return this.#connection.run(client => releaseLease(client, lease, ownerHash));
  }

  read(key: string): Promise<VersionedRecord | null> {
    const record = this.keys.record(key);
    return this.#connection.run(client => readRecord(client, record));
  }

  compareAndSwap(key: string, expectedRevision: string | null, next: unknown, _meta: CasMeta): Promise<CasResult> {
    const record = this.keys.record(key);
    const channel = this.keys.recordChannel(key);
    return this.#connection.run(client => compareAndSwapRecord(client, record, channel, expectedRevision, next));
  }

  watch(key: string, onChange: () => void): Disposable {
    const channel = this.keys.recordChannel(key);
    if (this.closed) return { dispose: () => undefined };
    this.#watcher ??= new RecordWatcher(this.#connection.client);
    return this.#watcher.watch(channel, onChange);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.#watcher?.close();
    this.#connection.close();
  }
}

/** Redis takes whole milliseconds; rounding up never shortens a lease. */
function wholeMs(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}

/** Opens the `redis` driver without connecting (the first operation connects). */
export function createRedisDriver(config: ResolvedConfig): RedisDriver {
  if (!config.prefixExplicit || config.prefix === '') {
    throw new LockConfigurationError(
      'The redis driver is shared between machines, so it needs an explicit, stable prefix that all intended deployments share: set LOCKSTEP_PREFIX or the prefix setting.',
      { setting: 'prefix' });
  }
  const connection = new RedisConnection({
    url: config.redisUrl ?? DEFAULT_REDIS_URL,
    connectTimeoutMs: config.connectTimeoutMs,
    commandTimeoutMs: config.commandTimeoutMs,
  });
  return new RedisDriver(connection, config.prefix);
}

/** The longest the `auto` probe waits for Redis before choosing the file driver. */
export const AUTO_PROBE_TIMEOUT_MS = 500;

/**
 * `auto`: true when Redis answers PING at LOCKSTEP_REDIS_URL (or the default local address) within
 * a short timeout. Called once per manager; the answer holds for the manager's lifetime.
 */
export async function redisAnswers(config: ResolvedConfig): Promise<boolean> {
  const timeout = Math.min(config.connectTimeoutMs, AUTO_PROBE_TIMEOUT_MS);
  const probe = new RedisConnection({
    url: config.redisUrl ?? DEFAULT_REDIS_URL,
    connectTimeoutMs: timeout,
    commandTimeoutMs: timeout,
    connectionName: 'lockstep-probe',
    reconnect: false,
  });
  try {
    await probe.run(client => client.ping());
    return true;
  } catch {
    return false;
  } finally {
    probe.close();
  }
}
