import { assertTtl, assertWait, MAX_RETRY_SLEEP_MS } from './bounds';
import { systemClock, SECOND, type Clock, type Timer } from './clock';
import { resolveConfig, type DriverName, type LockManagerOptions, type ResolvedConfig } from './config';
import { openDriver } from './drivers';
import { LockBusyError, LockConfigurationError, LockLeaseLostError, LockOwnershipError } from './errors';
import { assertValidName, keyDigest } from './names';
import { inspectAs, inspectCustom } from './redact';
import type { Driver } from './stores/store';
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

/** @internal What a handle asks of its manager: the store operations on its own lease. */
export interface LeaseControl {
  /** Extends the live lease to now + `ttlMs`; the new expiry, or undefined when it is gone. */
  extend(ttlMs: number): Promise<number | undefined>;
  release(): Promise<boolean>;
}

/**
 * The result of {@link LockManager.acquire}. `acquired` records whether the call obtained the
 * lease; it is not a continuing proof that the lease is still valid: {@link LockHandle.signal}
 * says when it is gone (docs/leases.md#handles).
 *
 * The owner token is a private field, reachable only through {@link LockHandle.ownerToken}: a
 * spread, `Object.entries`, `JSON.stringify` or `util.inspect` of a handle never shows it.
 */
export class LockHandle {
  /** Whether this call obtained the lease. */
  readonly acquired: boolean;
  /** Strictly increasing per name across every acquisition; undefined when not acquired. Never changes. */
  readonly fencingToken: number | undefined;
  readonly #token: string | undefined;
  readonly #control: LeaseControl | undefined;
  readonly #clock: Clock;
  /** Made on first use of {@link signal}: a refused acquire, or work that never reads it, pays nothing. */
  #controller: AbortController | undefined;
  /** Why this handle holds nothing (any more); the signal carries it. */
  #lost: keyof typeof LOST_MESSAGES | undefined;
  #expiry: number | undefined;
  #timer: Timer | undefined;
  #released = false;

  /** @internal */
  constructor(clock: Clock, lease?: { fencingToken: number; token: string; expiresAt: number; control: LeaseControl }) {
    this.#clock = clock;
    this.acquired = lease !== undefined;
    this.fencingToken = lease?.fencingToken;
    this.#token = lease?.token;
    this.#control = lease?.control;
    this.#expiry = lease?.expiresAt;
    // The expiry timer is armed only once someone reads `signal`: a lease whose signal nobody
    // watches costs no timer (extend checks the expiry against the clock itself).
    if (lease === undefined) this.#lost = 'not-acquired';
  }

  /** The 64-hex-character owner token. Throws when the lease was not acquired. */
  ownerToken(): string {
    if (!this.acquired || this.#token === undefined) {
      throw new LockOwnershipError('This handle did not acquire the lease, so it has no owner token. Check `acquired` first.');
    }
    return this.#token;
  }

  /** Estimated expiry from the manager's clock (the backend owns the real TTL); undefined when not acquired. */
  expiresAt(): Date | undefined {
    return this.#expiry === undefined ? undefined : new Date(this.#expiry);
  }

  /**
   * Aborts when this handle no longer holds the lease: its local expiry passed, an `extend` or
   * `release` found it gone, or it was released. Already aborted when the handle did not acquire.
   * The reason is a {@link LockLeaseLostError}. Pass it to the work done under the lease.
   */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#lost === undefined && this.#clock.now() >= this.#expiry!) this.#lose('expired');
      if (this.#lost !== undefined) this.#controller.abort(new LockLeaseLostError(LOST_MESSAGES[this.#lost]));
      else this.#armExpiry();
    }
    return this.#controller.signal;
  }

  /**
   * Extends the live lease to now + `ttl` seconds (1–86,400), keeping the same fencing token.
   * Returns false, and aborts {@link signal}, when the lease is already gone (past its local expiry,
   * released, expired in the store or taken by another owner): a lost lease is never revived.
   * Nothing extends a lease automatically; call this before {@link expiresAt}.
   */
  async extend(ttl: number): Promise<boolean> {
    assertTtl(ttl);
    if (this.#control === undefined || this.#released || this.#lost !== undefined) return false;
    if (this.#expiry === undefined || this.#clock.now() >= this.#expiry) {
      this.#lose('expired');
      return false;
    }
    const expiry = await this.#control.extend(ttl * SECOND);
    if (expiry === undefined) {
      this.#lose('gone');
      return false;
    }
    if (this.#lost !== undefined) return false;
    this.#expiry = expiry;
    if (this.#controller !== undefined) this.#armExpiry();
    return true;
  }

  /**
   * True only if this owner removed a live lease. False on a second call, after expiry, or when
   * the handle never acquired. Throws {@link LockOwnershipError} when another live owner now holds
   * the lease, and leaves that lease intact. Aborts {@link signal} in every case.
   */
  async release(): Promise<boolean> {
    if (this.#control === undefined || this.#released) return false;
    this.#released = true;
    let released: boolean;
    try {
      released = await this.#control.release();
    } catch (error) {
      if (error instanceof LockOwnershipError) this.#lose('gone');
      throw error;
    }
    this.#lose(released ? 'released' : 'gone');
    return released;
  }

  /** Keeps owner tokens out of logs and `console.log(handle)`. */
  toJSON(): Record<string, unknown> {
    return { acquired: this.acquired, fencingToken: this.fencingToken, expiresAt: this.#expiry };
  }

  [inspectCustom](): string {
    return `LockHandle { acquired: ${this.acquired}, fencingToken: ${this.fencingToken} }`;
  }

  #armExpiry(): void {
    this.#timer?.cancel();
    const expiry = this.#expiry!;
    this.#timer = this.#clock.setTimer(expiry - this.#clock.now(), () => {
      if (this.#expiry === expiry) this.#lose('expired');
    });
  }

  #lose(why: 'expired' | 'gone' | 'released'): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    if (this.#lost !== undefined) return;
    this.#lost = why;
    this.#controller?.abort(new LockLeaseLostError(LOST_MESSAGES[why]));
  }
}

const LOST_MESSAGES = {
  'not-acquired': 'This handle did not acquire the lease, so there is nothing to work under. Check `acquired` first.',
  expired: 'The lease passed its expiry before it was extended; stop the work done under it and acquire again (a new fencing token).',
  gone: 'The lease is no longer held by this owner (it expired in the store or another owner took it); stop the work done under it and acquire again.',
  released: 'The lease was released; work done under it must stop.',
} as const;

/**
 * The lock manager (docs/leases.md): named leases with TTL and wait bounds, owner tokens, typed
 * errors and a monotonic fencing token per acquisition.
 */
export class LockManager {
  /** The resolved settings; they print without credentials (see `config.ts`). */
  readonly config: ResolvedConfig;
  readonly #clock: Clock;
  readonly #injected: Driver | undefined;
  #driverPromise: Promise<Driver> | undefined;
  #opened: Driver | undefined;
  #closed = false;

  /** @internal use {@link createLockManager} */
  constructor(config: ResolvedConfig, clock: Clock, injected: Driver | undefined) {
    this.config = config;
    this.#clock = clock;
    this.#injected = injected;
  }

  /** Shows the settings only (no driver state, no names in use). */
  toJSON(): Record<string, unknown> {
    return { config: this.config };
  }

  [inspectCustom](depth: number, options: object): string {
    return inspectAs('LockManager', { config: this.config }, depth, options);
  }

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
    const driver = this.#opened ?? (await this.driver());
    const key = this.keyOf(name);
    const token = newOwnerToken();
    const ownerHash = hashToken(token);
    const deadline = this.#clock.monotonic() + wait * SECOND;

    for (;;) {
      const claim = await driver.claim(key, ownerHash, ttl * SECOND, this.#clock.now());
      if (claim.claimed) {
        return new LockHandle(this.#clock, {
          fencingToken: claim.fencingToken,
          token,
          expiresAt: claim.expiresAt,
          control: this.leaseControl(driver, key, ownerHash),
        });
      }
      const remaining = deadline - this.#clock.monotonic();
      if (remaining <= 0 || options.signal?.aborted) break;
      await this.#clock.sleep(Math.min(remaining, retryDelay()), options.signal);
      if (options.signal?.aborted) break;
    }
    return new LockHandle(this.#clock);
  }

  /**
   * Runs `fn` under the lease and releases it afterwards. `fn` receives the handle and its
   * `signal`, which aborts if the lease passes its expiry while `fn` runs. Throws {@link LockBusyError} when the
   * lease stayed busy for the whole wait. If `fn` and the release both fail, `fn`'s error wins and
   * the lease expires by TTL; a release failure after a successful `fn` propagates.
   */
  async run<T>(name: string, fn: (handle: LockHandle, signal: AbortSignal) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    const handle = await this.acquire(name, options);
    if (!handle.acquired) {
      throw new LockBusyError(
        `The lease is held by another owner and stayed busy for the whole wait (${options.wait ?? 0} s). Try again later or wait longer.`,
        options.wait ?? 0,
      );
    }
    let result: T;
    try {
      result = await fn(handle, handle.signal);
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
    const driver = (await this.driver()) as Driver & { migrate?: () => Promise<void> };
    if (typeof driver.migrate !== 'function') {
      throw new LockConfigurationError(`The ${driver.name} driver has nothing to migrate; migrate applies to the sql driver only.`, {
        setting: 'driver',
      });
    }
    await driver.migrate();
  }
  // --- end migrate ---

  /** Closes the driver's connections. Safe to call twice; later operations reopen nothing. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#opened = undefined;
    if (this.#driverPromise && !this.#injected) {
      const driver = await this.#driverPromise.catch(() => undefined);
      await driver?.close();
    }
  }

  /** Digests of recently used names: hashing on every acquire is measurable on fast backends. */
  readonly #keys = new Map<string, string>();

  private keyOf(name: string): string {
    let key = this.#keys.get(name);
    if (key === undefined) {
      if (this.#keys.size >= 1024) this.#keys.clear();
      key = keyDigest(this.config.prefix, name);
      this.#keys.set(name, key);
    }
    return key;
  }

  private driver(): Promise<Driver> {
    if (this.#closed) {
      return Promise.reject(new LockConfigurationError('This lock manager is closed; create a new one with createLockManager().'));
    }
    if (this.#injected) {
      this.#opened = this.#injected;
      return Promise.resolve(this.#opened);
    }
    // Decided once: `auto` never switches driver for the life of this manager. An open that failed decided nothing:
    // the next operation tries again (a SQLite folder not there yet, a server still starting), instead of failing for
    // the life of the manager.
    this.#driverPromise ??= openDriver(this.config).then(
      driver => (this.#opened = driver),
      (error: unknown) => {
        this.#driverPromise = undefined;
        throw error;
      },
    );
    return this.#driverPromise;
  }

  private leaseControl(driver: Driver, key: string, ownerHash: string): LeaseControl {
    const clock = this.#clock;
    return {
      async extend(ttlMs) {
        const now = clock.now();
        return (await driver.extend(key, ownerHash, ttlMs, now)) ? now + ttlMs : undefined;
      },
      async release() {
        const outcome = await driver.release(key, ownerHash, clock.now());
        if (outcome === 'other-owner') {
          throw new LockOwnershipError(
            'The lease expired and another owner holds it now; it was left intact. Keep critical sections shorter than the TTL.',
          );
        }
        return outcome === 'released';
      },
    };
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
