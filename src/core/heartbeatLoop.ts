import type { Clock, Timer } from './clock';
import { LockLeaseLostError } from './errors';
import { Emitter } from './event';
import { formatClock } from './format';

/** Retry delays after consecutive failures: 1 s, 2 s, 4 s, … capped at 30 s. Pure. */
export function backoffDelay(failures: number, capMs = 30_000, baseMs = 1_000): number {
  return Math.min(capMs, baseMs * 2 ** Math.max(0, failures - 1));
}

/** A renewal is never scheduled sooner than this after the previous one (near the 24 h cap, expiry stops moving). */
export const MIN_RENEW_DELAY_MS = 1_000;

export interface HeartbeatLoopOptions {
  /** Time and timers (inject a ManualClock in tests). */
  readonly clock: Clock;
  /**
   * Extends the lease once and resolves with its new expiry (epoch ms). Rejecting with
   * {@link LockLeaseLostError} means the store says the lease is gone; any other rejection is a
   * failure (store unreachable), retried with back-off until the lease's expiry passes.
   */
  readonly renew: () => Promise<{ readonly expiresAt: number }>;
  /** How often to renew while all goes well, in milliseconds. */
  readonly intervalMs: number;
  /** The lease's expiry when the loop starts (epoch ms): the last one the store confirmed. */
  readonly expiresAt: number;
  /** Delay before the retry after `failures` consecutive failures. Default {@link backoffDelay}, capped at the interval. */
  readonly retryDelayMs?: (failures: number) => number;
  /** Keep the process alive while the loop waits (the command line's `heartbeat --every`). Default false. */
  readonly keepAlive?: boolean;
  /** The grant this lease is, named in the loss's message. */
  readonly grant?: number;
}

export interface HeartbeatRenewed {
  readonly expiresAt: number;
}

export interface HeartbeatFailed {
  readonly error: unknown;
  /** Consecutive failures so far, this one included. */
  readonly failures: number;
  readonly retryInMs: number;
  /** The last expiry the store confirmed: the lease is lost locally once the clock passes it. */
  readonly expiresAt: number;
}

/**
 * Why a loop declared its lease lost. `superseded`: the store said the lease is gone (expired,
 * cleared or taken). `expired`: the local clock passed the last confirmed expiry before a renewal
 * succeeded — typically the store stayed unreachable that long (`lastError` says why).
 */
export type HeartbeatLoss =
  | { readonly reason: 'superseded'; readonly error: LockLeaseLostError; readonly expiresAt: number }
  | { readonly reason: 'expired'; readonly error: LockLeaseLostError; readonly lastError: unknown; readonly expiresAt: number };

export type HeartbeatLoopState = 'running' | 'lost' | 'stopped';

/**
 * Keeps one lease alive (docs/leases.md#heartbeat): renews every interval, one renewal at a time,
 * retries failures with back-off, and declares the lease lost on its own once the local clock
 * passes the last expiry the store confirmed. A lost lease is final: the loop never renews again,
 * even if the store comes back and would accept it. Never throws from a timer.
 *
 * Create it, subscribe to its events, then `start()`. `stop()` ends the loop passively (nothing
 * is released, no event fires).
 */
export class HeartbeatLoop {
  private readonly _onDidRenew = new Emitter<HeartbeatRenewed>();
  readonly onDidRenew = this._onDidRenew.event;
  private readonly _onDidFail = new Emitter<HeartbeatFailed>();
  readonly onDidFail = this._onDidFail.event;
  private readonly _onDidLose = new Emitter<HeartbeatLoss>();
  readonly onDidLose = this._onDidLose.event;

  readonly #options: HeartbeatLoopOptions;
  #state: HeartbeatLoopState = 'running';
  #expiresAt: number;
  #failures = 0;
  #lastError: unknown;
  #inFlight = false;
  #renewTimer: Timer | undefined;
  #expiryTimer: Timer | undefined;

  constructor(options: HeartbeatLoopOptions) {
    if (!Number.isFinite(options.intervalMs) || options.intervalMs <= 0) {
      throw new RangeError('The heartbeat interval must be a positive number of milliseconds.');
    }
    this.#options = options;
    this.#expiresAt = options.expiresAt;
  }

  /** Starts renewing (subscribe to the events first). A lease already past its expiry is lost at once. */
  start(): this {
    if (this.#state !== 'running' || this.#expiryTimer !== undefined) return this;
    this.#armExpiry();
    this.#scheduleRenew(this.#nextDelay());
    return this;
  }

  get state(): HeartbeatLoopState {
    return this.#state;
  }
  /** The last expiry the store confirmed (epoch ms). */
  get expiresAt(): number {
    return this.#expiresAt;
  }

  /** Renews now instead of at the next tick (no-op while a renewal runs or once the loop ended). */
  renewNow(): void {
    this.#scheduleRenew(0);
  }

  /** Ends the loop without releasing anything and without an event. Safe to call twice. */
  stop(): void {
    if (this.#state === 'running') this.#state = 'stopped';
    this.#cancelTimers();
  }

  dispose(): void {
    this.stop();
    this._onDidRenew.dispose();
    this._onDidFail.dispose();
    this._onDidLose.dispose();
  }

  async #tick(): Promise<void> {
    if (this.#state !== 'running' || this.#inFlight) return;
    if (this.#options.clock.now() >= this.#expiresAt) {
      this.#loseByExpiry();
      return;
    }
    this.#inFlight = true;
    try {
      const { expiresAt } = await this.#options.renew();
      if (this.#state !== 'running') return; // lost or stopped meanwhile: never revived
      this.#failures = 0;
      this.#lastError = undefined;
      this.#expiresAt = Math.max(this.#expiresAt, expiresAt);
      this.#armExpiry();
      this._onDidRenew.fire({ expiresAt: this.#expiresAt });
      this.#scheduleRenew(this.#nextDelay());
    } catch (error) {
      if (this.#state !== 'running') return;
      if (error instanceof LockLeaseLostError) {
        this.#lose({ reason: 'superseded', error, expiresAt: this.#expiresAt });
        return;
      }
      this.#failures += 1;
      this.#lastError = error;
      const retryInMs = Math.min(this.#options.retryDelayMs?.(this.#failures) ?? backoffDelay(this.#failures), this.#options.intervalMs);
      this._onDidFail.fire({ error, failures: this.#failures, retryInMs, expiresAt: this.#expiresAt });
      this.#scheduleRenew(retryInMs);
    } finally {
      this.#inFlight = false;
    }
  }

  /** Half the time left, so that one failed renewal still leaves room for another; never more than the interval. */
  #nextDelay(): number {
    const half = (this.#expiresAt - this.#options.clock.now()) / 2;
    return Math.max(MIN_RENEW_DELAY_MS, Math.min(this.#options.intervalMs, half));
  }

  #scheduleRenew(delayMs: number): void {
    if (this.#state !== 'running') return;
    this.#renewTimer?.cancel();
    this.#renewTimer = this.#options.clock.setTimer(
      delayMs,
      () => {
        void this.#tick();
      },
      { keepAlive: this.#options.keepAlive },
    );
  }

  #armExpiry(): void {
    this.#expiryTimer?.cancel();
    const left = this.#expiresAt - this.#options.clock.now();
    if (left <= 0) {
      this.#loseByExpiry();
      return;
    }
    this.#expiryTimer = this.#options.clock.setTimer(
      left,
      () => {
        // A renewal that is still in flight cannot save it: the lease's time is up locally.
        if (this.#options.clock.now() >= this.#expiresAt) this.#loseByExpiry();
        else this.#armExpiry();
      },
      { keepAlive: this.#options.keepAlive },
    );
  }

  #loseByExpiry(): void {
    const offline = this.#lastError !== undefined;
    const lease = `Your lease${this.#options.grant !== undefined ? ` (grant #${this.#options.grant})` : ''} expired at ${formatClock(this.#expiresAt)}`;
    const error = new LockLeaseLostError(
      offline
        ? `${lease} while the lock store was unreachable, so it is lost; it will not be renewed. Once the store is back, acquire again (a new grant) before pushing.`
        : `${lease} before a heartbeat renewed it, so it is lost; a lost lease is never revived. Acquire again (a new grant) before pushing.`,
      this.#options.grant,
    );
    this.#lose({ reason: 'expired', error, lastError: this.#lastError, expiresAt: this.#expiresAt });
  }

  #lose(loss: HeartbeatLoss): void {
    if (this.#state !== 'running') return;
    this.#state = 'lost';
    this.#cancelTimers();
    this._onDidLose.fire(loss);
  }

  #cancelTimers(): void {
    this.#renewTimer?.cancel();
    this.#expiryTimer?.cancel();
    this.#renewTimer = undefined;
    this.#expiryTimer = undefined;
  }
}
