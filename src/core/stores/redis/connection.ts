import Redis, { type RedisOptions } from 'ioredis';
import { LockBackendError, LockConfigurationError } from '../../errors';
import { inspectAs, inspectCustom, redactUrl } from '../../redact';
import { translateRedisError } from './backendErrors';

export { DEFAULT_REDIS_URL } from '../../config';

export interface ConnectionSettings {
  /** `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS. Never printed. */
  readonly url: string;
  readonly connectTimeoutMs: number;
  readonly commandTimeoutMs: number;
  /** Shown in `CLIENT LIST`, so operators can tell Lockstep's connections apart. */
  readonly connectionName?: string;
  /** Keep reconnecting after a failure (drivers), or give up after the first (the `auto` probe). */
  readonly reconnect?: boolean;
}

/**
 * One ioredis connection with Lockstep's failure policy: connect lazily (creating a driver opens no
 * socket), never queue commands while disconnected, never re-send a command behind the caller's
 * back, and bound every wait by the connect or command timeout. An outage therefore fails an
 * operation quickly with {@link LockBackendError}; once Redis is back, the next operation works.
 */
export class RedisConnection {
  readonly #client: Redis;
  readonly #settings: ConnectionSettings;
  private waiting: Promise<Redis> | undefined;
  private closed = false;

  constructor(settings: ConnectionSettings) {
    this.#settings = settings;
    assertRedisUrl(settings.url);
    const options: RedisOptions = {
      lazyConnect: true,
      connectTimeout: settings.connectTimeoutMs,
      commandTimeout: settings.commandTimeoutMs,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      connectionName: settings.connectionName ?? 'lockstep',
      // Reconnect in the background, quickly, so that a restarted server is picked up by the next operation.
      retryStrategy: settings.reconnect === false ? () => null : times => Math.min(50 * times, 500),
    };
    this.#client = new Redis(settings.url, options);
    // Failures reach callers as typed errors; ioredis would otherwise print them (with the address).
    this.#client.on('error', () => undefined);
  }

  /** The ioredis client (its options hold the URL's password: never print it). */
  get client(): Redis {
    return this.#client;
  }

  toJSON(): Record<string, unknown> {
    return { url: redactUrl(this.#settings.url) };
  }

  [inspectCustom](depth: number, options: object): string {
    return inspectAs('RedisConnection', this.toJSON(), depth, options);
  }

  /** Runs one operation on a ready connection; whatever ioredis throws becomes a typed error. */
  run<T>(operation: (client: Redis) => Promise<T>): Promise<T> {
    // The common case goes straight to the command: no extra round trip, no extra await.
    const pending = this.#client.status === 'ready' ? operation(this.#client) : this.ready().then(operation);
    return pending.catch((error: unknown) => { throw translateRedisError(error, this.#settings); });
  }

  /** Closes the socket at once and stops reconnecting. Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.#client.disconnect();
  }

  private ready(): Promise<Redis> {
    if (this.closed) {
      return Promise.reject(new LockBackendError('redis', 'This Redis connection was closed; create a new lock manager.', { retryable: false }));
    }
    this.waiting ??= this.waitForReady().finally(() => { this.waiting = undefined; });
    return this.waiting;
  }

  /**
   * Connects (first use) or waits for the reconnection in progress: resolves on `ready`, rejects
   * on the next failed attempt or after the connect timeout, whichever comes first.
   */
  private waitForReady(): Promise<Redis> {
    const client = this.#client;
    return new Promise<Redis>((resolve, reject) => {
      const settle = (error: unknown): void => {
        clearTimeout(timer);
        client.off('ready', onReady);
        client.off('error', onError);
        client.off('end', onEnd);
        if (error === undefined) resolve(client); else reject(error);
      };
      const onReady = (): void => settle(undefined);
      const onError = (error: unknown): void => settle(error);
      const onEnd = (): void => settle(Object.assign(new Error('Connection is closed.'), { code: 'ECONNCLOSED' }));
      const timer = setTimeout(() => settle(Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' })), this.#settings.connectTimeoutMs);
      client.on('ready', onReady);
      client.on('error', onError);
      client.on('end', onEnd);
      if (client.status === 'ready') settle(undefined);
      // A failed first attempt also arrives as an `error` event; the promise itself adds nothing.
      else if (client.status === 'wait' || client.status === 'end') client.connect().catch(() => undefined);
    });
  }
}

/** Checks the URL's form without ever echoing it (it may hold a password). */
export function assertRedisUrl(url: string): void {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    protocol = '';
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:') {
    throw new LockConfigurationError(
      'The Redis URL must look like redis://[user:password@]host[:port][/db], or rediss://... for TLS; check LOCKSTEP_REDIS_URL or the redisUrl setting.',
      { setting: 'redisUrl' });
  }
}
