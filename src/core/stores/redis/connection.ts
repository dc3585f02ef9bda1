import { LockBackendError } from '../../errors';
import { inspectAs, inspectCustom, redactUrl } from '../../redact';
import { translateRedisError } from './backendErrors';
import { createClient, createSubscriber, type ClientPolicy, type RedisClient } from './clients';
import { parseRedisTarget, type DeploymentKind, type RedisTarget } from './redisTarget';

export { DEFAULT_REDIS_URL } from '../../config';

export interface ConnectionSettings {
  /** `redis://…`, `rediss://…`, `redis-sentinel://…` or `redis-cluster://…` (redisTarget.ts). Never printed. */
  readonly url: string;
  readonly connectTimeoutMs: number;
  readonly commandTimeoutMs: number;
  /** Shown in `CLIENT LIST`, so operators can tell Lockstep's connections apart. */
  readonly connectionName?: string;
  /** Keep reconnecting after a failure (drivers), or give up after the first (the `auto` probe). */
  readonly reconnect?: boolean;
}

/**
 * One ioredis client (one server, a Sentinel-managed master, or a Cluster) with Lockstep's failure policy: connect lazily (creating a driver opens no
 * socket), never queue commands while disconnected, never re-send a command behind the caller's
 * back, and bound every wait by the connect or command timeout. An outage therefore fails an
 * operation quickly with {@link LockBackendError}; once Redis is back, the next operation works.
 */
export class RedisConnection {
  readonly #client: RedisClient;
  readonly #settings: ConnectionSettings;
  readonly #target: RedisTarget;
  readonly #policy: ClientPolicy;
  private waiting: Promise<RedisClient> | undefined;
  private closed = false;

  constructor(settings: ConnectionSettings) {
    this.#settings = settings;
    this.#target = parseRedisTarget(settings.url);
    this.#policy = {
      connectTimeoutMs: settings.connectTimeoutMs,
      commandTimeoutMs: settings.commandTimeoutMs,
      connectionName: settings.connectionName ?? 'lockstep',
      reconnect: settings.reconnect !== false,
    };
    this.#client = createClient(this.#target, this.#policy);
    // Failures reach callers as typed errors; ioredis would otherwise print them (with the address).
    this.#client.on('error', () => undefined);
  }

  /** The ioredis client (its options hold the URL's password: never print it). */
  get client(): RedisClient {
    return this.#client;
  }

  /** One server, a master found through Sentinel, or a Cluster. */
  get kind(): DeploymentKind {
    return this.#target.kind;
  }

  /** The timeouts, for messages and for bounding `WAIT`. */
  get timeouts(): { readonly connectTimeoutMs: number; readonly commandTimeoutMs: number } {
    return { connectTimeoutMs: this.#settings.connectTimeoutMs, commandTimeoutMs: this.#settings.commandTimeoutMs };
  }

  /** A new client to the same deployment for pub/sub (clients.ts). The caller disconnects it. */
  createSubscriber(): RedisClient {
    const subscriber = createSubscriber(this.#target, this.#policy);
    subscriber.on('error', () => undefined);
    return subscriber;
  }

  toJSON(): Record<string, unknown> {
    return { url: redactUrl(this.#settings.url) };
  }

  [inspectCustom](depth: number, options: object): string {
    return inspectAs('RedisConnection', this.toJSON(), depth, options);
  }

  /** Runs one operation on a ready connection; whatever ioredis throws becomes a typed error. */
  run<T>(operation: (client: RedisClient) => Promise<T>): Promise<T> {
    // The common case goes straight to the command: no extra round trip, no extra await.
    const pending = this.#client.status === 'ready' ? operation(this.#client) : this.ready().then(operation);
    return pending.catch((error: unknown) => {
      throw translateRedisError(error, this.#settings);
    });
  }

  /** Closes the socket at once and stops reconnecting. Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.#client.disconnect();
  }

  private ready(): Promise<RedisClient> {
    if (this.closed) {
      return Promise.reject(
        new LockBackendError('redis', 'This Redis connection was closed; create a new lock manager.', { retryable: false }),
      );
    }
    this.waiting ??= this.waitForReady().finally(() => {
      this.waiting = undefined;
    });
    return this.waiting;
  }

  /**
   * Connects (first use) or waits for the reconnection in progress: resolves on `ready`, rejects
   * on the next failed attempt or after the connect timeout, whichever comes first.
   */
  private waitForReady(): Promise<RedisClient> {
    const client = this.#client;
    return new Promise<RedisClient>((resolve, reject) => {
      const settle = (error: unknown): void => {
        clearTimeout(timer);
        client.off('ready', onReady);
        client.off('error', onError);
        client.off('end', onEnd);
        if (error === undefined) resolve(client);
        else reject(error);
      };
      const onReady = (): void => settle(undefined);
      const onError = (error: unknown): void => settle(error);
      const onEnd = (): void => settle(Object.assign(new Error('Connection is closed.'), { code: 'ECONNCLOSED' }));
      const timer = setTimeout(
        () => settle(Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' })),
        this.#settings.connectTimeoutMs,
      );
      client.on('ready', onReady);
      client.on('error', onError);
      client.on('end', onEnd);
      if (client.status === 'ready') settle(undefined);
      // A failed first attempt also arrives as an `error` event; the promise itself adds nothing.
      else if (client.status === 'wait' || client.status === 'end') client.connect().catch(() => undefined);
    });
  }
}
