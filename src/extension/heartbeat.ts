import type * as vscode from 'vscode';
import {
  type Clock,
  type Disposable,
  HeartbeatLoop,
  type HeartbeatLoss,
  LockState,
  type LockStatus,
  systemClock,
} from '../core/application';

export interface HeartbeatHooks {
  /** Extends the lease; resolves with the new expiry. */
  beat(): Promise<{ expiresAt: number }>;
  intervalMs(): number;
  /**
   * The lease is lost and will not be revived: the store said so (`superseded`), or the store
   * stayed unreachable until the lease's expiry passed (`expired`).
   */
  onLost(loss: HeartbeatLoss, grant: number): void;
  /** A beat failed for another reason (backend unreachable); it is retried with back-off. */
  onFailed(error: unknown, retryInMs: number): void;
  onBeat(expiresAt: number): void;
}

/**
 * Keeps the holder's lease alive while the window lives, with core's {@link HeartbeatLoop} (one
 * beat per interval, never two at once, back-off, loss decided locally at expiry). This class only
 * starts a loop for each newly held grant and stops it when the status says we no longer hold it.
 * Closing VS Code stops it without releasing: a lease is released only after a push, or expires by TTL.
 */
export class Heartbeat implements vscode.Disposable {
  private loop: HeartbeatLoop | undefined;
  private subscriptions: Disposable[] = [];
  private grant: number | undefined;
  /** The last grant whose loss a loop declared: a status read later never restarts it. */
  private lostGrant: number | undefined;
  private disposed = false;

  constructor(
    private readonly hooks: HeartbeatHooks,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Starts beating for a newly held grant, stops when the status says we no longer hold it. */
  update(status: LockStatus): void {
    if (status.state !== LockState.HeldByMe || status.holder === null) {
      this.stop();
      return;
    }
    const grant = status.holder.grant;
    if (this.disposed || this.grant === grant || this.lostGrant === grant) return;
    this.stop();
    this.grant = grant;
    const loop = new HeartbeatLoop({
      clock: this.clock,
      renew: () => this.hooks.beat(),
      intervalMs: this.hooks.intervalMs(),
      expiresAt: status.holder.expiresAt,
      grant,
    });
    this.subscriptions = [
      loop.onDidRenew(({ expiresAt }) => this.hooks.onBeat(expiresAt)),
      loop.onDidFail(({ error, retryInMs }) => this.hooks.onFailed(error, retryInMs)),
      loop.onDidLose(loss => {
        this.lostGrant = grant;
        this.stop();
        this.hooks.onLost(loss, grant);
      }),
    ];
    this.loop = loop;
    loop.start();
  }

  /** Whether a loop declared this grant's lease lost. */
  isLost(grant: number): boolean {
    return this.lostGrant === grant;
  }

  /** Beats now (the user asked to retry); nothing when no loop runs. */
  beatNow(): void {
    this.loop?.renewNow();
  }

  stop(): void {
    this.grant = undefined;
    for (const s of this.subscriptions) s.dispose();
    this.subscriptions = [];
    this.loop?.dispose();
    this.loop = undefined;
  }

  dispose(): void {
    this.disposed = true;
    this.stop();
  }
}
