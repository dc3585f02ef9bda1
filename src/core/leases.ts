import { assertTtl, assertWait, MAX_RETRY_SLEEP_MS } from './bounds';
import { systemClock, SECOND, type Clock } from './clock';
import { resolveConfig, type LockManagerOptions, type ResolvedConfig } from './config';
import { openDriver } from './drivers';
import { LockBusyError, LockConfigurationError, LockOwnershipError } from './errors';
import { assertValidName, keyDigest } from './names';
import type { Driver, DriverName } from './stores/store';
import { hashToken, newOwnerToken } from './tokens';

export interface AcquireOptions {
  /** Lease length in seconds, 1–86,400. Default 30. */
  ttl?: number;
  /** How long to keep trying while another owner holds the lease, 0–60 s. Default 0. */
  wait?: number;
  /** Ends the wait early; the call then returns a handle that did not acquire. */
  signal?: AbortSignal;
}

export interface CreateLockManagerOptions extends LockManagerOptions {
  /** Injected time (tests). Default: the system clock. */
  clock?: Clock;
  /** Environment to read `LOCKSTEP_*` from. Default: `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** An already open driver (tests, embedding). The manager does not own it unless `ownsDriver`. */
  driverInstance?: Driver;
}

/**
 * The result of {@link LockManager.acquire}. `acquired` records whether the call obtained the
 * lease; it is not a continuing proof that the lease is still valid.
 */
export class LockHandle {
  private released = false;

  /** @internal */
  constructor(
    readonly acquired: boolean,
    /** Strictly increasing per name across every acquisition; undefined when not acquired. */
    readonly fencingToken: number | undefined,
    private readonly token: string | undefined,
    private readonly expiry: number | undefined,
    private readonly releaser: (() => Promise<boolean>) | undefined,
  ) {}

  /** The 64-hex-character owner token. Throws when the lease was not acquired. */
  ownerToken(): string {
    if (!this.acquired || this.token === undefined) {
      throw new LockOwnershipError('This handle did not acquire the lease, so it has no owner token. Check `acquired` first.');
    }
    return this.token;
  }

  /** Estimated expiry from the manager's clock (the backend owns the real TTL); undefined when not acquired. */
  expiresAt(): Date | undefined {
    return this.expiry === undefined ? undefined : new Date(this.expiry);
  }

  /**
   * True only if this owner removed a live lease. False on a second call, after expiry, or when
   * the handle never acquired. Throws {@link LockOwnershipError} when another live owner now holds
   * the lease, and leaves that lease intact.
   */
  async release(): Promise<boolean> {
    if (!this.acquired || this.token === undefined || this.releaser === undefined || this.released) return false;
    this.released = true;
    return this.releaser();
  }

  /** Keeps owner tokens out of logs and `console.log(handle)`. */
  toJSON(): Record<string, unknown> {
    return { acquired: this.acquired, fencingToken: this.fencingToken, expiresAt: this.expiry };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `LockHandle { acquired: ${this.acquired}, fencingToken: ${this.fencingToken} }`;
  }
}

/**
 * Seed 003's lock manager: named leases with TTL and wait bounds, owner tokens, typed errors and,
 * beyond the seed, a monotonic fencing token per acquisition.
 */
export class LockManager {
  private driverPromise: Promise<Driver> | undefined;
  private opened: Driver | undefined;
  private closed = false;

  /** @internal use {@link createLockManager} */
  constructor(
    readonly config: ResolvedConfig,
    private readonly clock: Clock,
    private readonly injected: Driver | undefined,
  ) {}

  /** The driver in use, once the first operation decided it (relevant for `auto`). */
  async driverName(): Promise<DriverName> {
    return (await this.driver()).name;
  }

  async acquire(name: string, options: AcquireOptions = {}): Promise<LockHandle> {
    assertValidName(name);
    const ttl = options.ttl ?? 30;
    const wait = options.wait ?? 0;
    assertTtl(ttl);
    assertWait(wait);
    // The hot path skips a promise hop once the driver is open.
    const driver = this.opened ?? await this.driver();
    const key = this.keyOf(name);
    const token = newOwnerToken();
    const ownerHash = hashToken(token);
    const deadline = this.clock.monotonic() + wait * SECOND;

    for (;;) {
      const claim = await driver.claim(key, ownerHash, ttl * SECOND, this.clock.now());
      if (claim.claimed) {
        return new LockHandle(true, claim.fencingToken, token, claim.expiresAt,
          () => this.releaseKey(driver, key, ownerHash));
      }
      const remaining = deadline - this.clock.monotonic();
      if (remaining <= 0 || options.signal?.aborted) break;
      await this.clock.sleep(Math.min(remaining, retryDelay()), options.signal);
      if (options.signal?.aborted) break;
    }
    return new LockHandle(false, undefined, undefined, undefined, undefined);
  }

  /**
   * Runs `fn` under the lease and releases it afterwards. Throws {@link LockBusyError} when the
   * lease stayed busy for the whole wait. If `fn` and the release both fail, `fn`'s error wins and
   * the lease expires by TTL; a release failure after a successful `fn` propagates.
   */
  async run<T>(name: string, fn: (handle: LockHandle) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    const handle = await this.acquire(name, options);
    if (!handle.acquired) {
      throw new LockBusyError(`The lease is held by another owner and stayed busy for the whole wait (${options.wait ?? 0} s). Try again later or wait longer.`, options.wait ?? 0);
    }
    let result: T;
    try {
      result = await fn(handle);
    } catch (error) {
      await handle.release().catch(() => undefined);
      throw error;
    }
    await handle.release();
    return result;
  }

  // --- migrate (SQL driver) ---
  /** Creates the SQL driver's `reliability_locks` table when missing; harmless to run twice. */
  async migrate(): Promise<void> {
    const driver = await this.driver() as Driver & { migrate?: () => Promise<void> };
    if (typeof driver.migrate !== 'function') {
      throw new LockConfigurationError(`The ${driver.name} driver has nothing to migrate; migrate applies to the sql driver only.`, { setting: 'driver' });
    }
    await driver.migrate();
  }
  // --- end migrate ---

  /** Closes the driver's connections. Safe to call twice; later operations reopen nothing. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.opened = undefined;
    if (this.driverPromise && !this.injected) {
      const driver = await this.driverPromise.catch(() => undefined);
      await driver?.close();
    }
  }

  /** Digests of recently used names: hashing on every acquire is measurable on fast backends. */
  private readonly keys = new Map<string, string>();

  private keyOf(name: string): string {
    let key = this.keys.get(name);
    if (key === undefined) {
      if (this.keys.size >= 1024) this.keys.clear();
      key = keyDigest(this.config.prefix, name);
      this.keys.set(name, key);
    }
    return key;
  }

  private driver(): Promise<Driver> {
    if (this.closed) {
      return Promise.reject(new LockConfigurationError('This lock manager is closed; create a new one with createLockManager().'));
    }
    if (this.injected) return Promise.resolve(this.opened = this.injected);
    // Decided once: `auto` never switches driver for the life of this manager.
    this.driverPromise ??= openDriver(this.config).then(driver => (this.opened = driver));
    return this.driverPromise;
  }

  private async releaseKey(driver: Driver, key: string, ownerHash: string): Promise<boolean> {
    const outcome = await driver.release(key, ownerHash, this.clock.now());
    if (outcome === 'other-owner') {
      throw new LockOwnershipError('The lease expired and another owner holds it now; it was left intact. Keep critical sections shorter than the TTL.');
    }
    return outcome === 'released';
  }
}

/** Between 5 and 25 ms, so that contending processes do not retry in lockstep. */
function retryDelay(): number {
  return 5 + Math.random() * (MAX_RETRY_SLEEP_MS - 5);
}

/** Creates a manager. Opens no file, socket or connection until the first operation. */
export function createLockManager(options: CreateLockManagerOptions = {}): LockManager {
  const config = resolveConfig(options, options.env ?? process.env);
  return new LockManager(config, options.clock ?? systemClock, options.driverInstance);
}
