import type * as vscode from 'vscode';
import { LockLeaseLostError } from '../core/errors';
import { LockState, type LockStatus } from '../core/lockStatus';
import { backoffDelay } from './backoff';

export interface HeartbeatHooks {
  /** Extends the lease; resolves with the new expiry. */
  beat(): Promise<{ expiresAt: number }>;
  intervalMs(): number;
  /** The lease expired or was superseded: it will not be revived. */
  onLost(error: LockLeaseLostError): void;
  /** A beat failed for another reason (backend unreachable); it is retried with back-off. */
  onFailed(error: unknown, retryInMs: number): void;
  onBeat(expiresAt: number): void;
}

/**
 * Keeps the holder's lease alive while the window lives: one beat per interval, never two at
 * once, retries with back-off, and never throws from its timer. Closing VS Code stops it without
 * releasing: a lease is released only after a push, or expires by TTL.
 */
export class Heartbeat implements vscode.Disposable {
  private timer: NodeJS.Timeout | undefined;
  private inFlight = false;
  private failures = 0;
  private grant: number | undefined;
  private disposed = false;

  constructor(private readonly hooks: HeartbeatHooks, private readonly now: () => number = Date.now) {}

  /** Starts beating for a newly held grant, stops when the status says we no longer hold it. */
  update(status: LockStatus): void {
    if (status.state !== LockState.HeldByMe || status.holder === null) {
      this.stop();
      return;
    }
    if (this.grant === status.holder.grant) return;
    this.grant = status.holder.grant;
    this.failures = 0;
    // Beat early when the lease would run out before the first interval.
    const untilExpiry = status.holder.expiresAt - this.now();
    this.schedule(Math.max(1_000, Math.min(this.hooks.intervalMs(), untilExpiry / 2)));
  }

  stop(): void {
    this.grant = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  dispose(): void {
    this.disposed = true;
    this.stop();
  }

  private schedule(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.disposed || this.grant === undefined) return;
    this.timer = setTimeout(() => { void this.tick(); }, delayMs);
  }

  private async tick(): Promise<void> {
    if (this.inFlight || this.grant === undefined) return;
    this.inFlight = true;
    try {
      const { expiresAt } = await this.hooks.beat();
      this.failures = 0;
      this.hooks.onBeat(expiresAt);
      this.schedule(this.hooks.intervalMs());
    } catch (error) {
      if (error instanceof LockLeaseLostError) {
        this.stop();
        this.hooks.onLost(error);
      } else {
        this.failures += 1;
        const retry = Math.min(backoffDelay(this.failures), this.hooks.intervalMs());
        this.hooks.onFailed(error, retry);
        this.schedule(retry);
      }
    } finally {
      this.inFlight = false;
    }
  }
}
