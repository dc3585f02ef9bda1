import type { Clock, Timer, Watch, WatchInterest, WatchOptions } from '../core/application';
import type { BadgeFreshness } from './badge';

/** The re-read of a push watch that states no health of its own (the memory driver): a safety net. */
export const SAFETY_POLL_MS = 30_000;

export interface WatchKeeperOptions {
  /** Starts the driver's watch (Container.watch); undefined or a failure: there is none, the keeper polls. */
  readonly open: (onChange: () => void, options: WatchOptions) => Promise<Watch | undefined>;
  /** One read of the page (the model's refresh, which coalesces). */
  readonly read: () => void;
  /** The poll setting (`lockstep.pollSeconds`) in ms: the pace while there is no live path. */
  readonly pollMs: () => number;
  /** What the window does with the lock, for a polling watch's pace. */
  readonly interest: () => WatchInterest;
  readonly clock: Clock;
  /**
   * The longest pause before a change the watch heard is read (windowInterest.ts): 0 (the default) reads at
   * once; otherwise the read comes after a pause drawn in [0, that), and every change heard meanwhile
   * rides on it.
   */
  readonly settleMs?: () => number;
  /** Draws the pause: a number in [0, 1) (tests inject it). */
  readonly random?: () => number;
  /** The watch could not be started (logged by the owner); the keeper polls instead. */
  readonly onOpenFailed?: (error: unknown) => void;
}

/**
 * Keeps one window's watch of its page and decides the reads it needs besides the watch's events:
 *
 * - a polling watch (git, SQL) is its own safety net (each poll compares the revision): no re-read;
 * - a push watch with a live path (Redis pub/sub, file watch): no periodic read while it is healthy;
 *   one read when it goes down, every `pollMs` while it is down (a file watch is started again at
 *   each of those reads, Redis subscribes again by itself) and one when it is back;
 * - a push watch that states no health: a safety re-read every 30 s; no watch at all: every `pollMs`,
 *   each read after trying to start one again.
 *
 * A change the watch hears is read at once, or after a pause while `settleMs` says so (a window that
 * neither holds nor heads the queue: windowInterest.ts); the reads above, which a watch's health asks for,
 * never wait.
 *
 * `freshness()` is the bound the badge's tooltip states for the same cases. Time is the injected clock.
 */
export class WatchKeeper {
  private watch: Watch | undefined;
  private timer: Timer | undefined;
  /** The read a change is waiting for (its pause running). */
  private settling: Timer | undefined;
  private disposed = false;

  constructor(private readonly options: WatchKeeperOptions) {}

  /** Starts the watch and the reads it needs. The caller reads once itself (the first read). */
  async start(): Promise<void> {
    await this.openWatch();
    this.schedule();
  }

  /** There is a watch (for the log line). */
  get watching(): boolean {
    return this.watch !== undefined;
  }

  /** The window's interest changed: a polling watch decides its next poll again. */
  nudge(): void {
    this.watch?.nudge?.();
  }

  /** The bound the badge states; `settleMs`: the pause a change may wait before it is read (default: the option's answer now). */
  freshness(settleMs = this.settleMs()): BadgeFreshness {
    const bound = this.watchFreshness();
    return settleMs > 0 ? { ...bound, settleWithinMs: settleMs } : bound;
  }

  private watchFreshness(): BadgeFreshness {
    const watch = this.watch;
    const pollMs = this.options.pollMs();
    if (!watch) return { withinMs: pollMs };
    const stated = watch.freshness;
    if (stated && watch.announced) return { withinMs: stated.idleMs, announced: true };
    if (stated) return { withinMs: stated.idleMs, activeWithinMs: stated.activeMs };
    if (watch.live) return watch.live.healthy ? { withinMs: 0, live: watch.live.via } : { withinMs: pollMs };
    return { withinMs: SAFETY_POLL_MS, announced: true };
  }

  dispose(): void {
    this.disposed = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.settling?.cancel();
    this.settling = undefined;
    this.watch?.dispose();
    this.watch = undefined;
  }

  /** The delay to the next read of our own, or undefined for none. */
  private nextReadIn(): number | undefined {
    const watch = this.watch;
    if (!watch) return this.options.pollMs();
    if (watch.freshness) return undefined;
    if (watch.live) return watch.live.healthy ? undefined : this.options.pollMs();
    return SAFETY_POLL_MS;
  }

  private schedule(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.disposed) return;
    const delay = this.nextReadIn();
    if (delay === undefined) return;
    this.timer = this.options.clock.setTimer(delay, () => {
      this.timer = undefined;
      void this.tick();
    });
  }

  private async tick(): Promise<void> {
    const live = this.watch?.live;
    // A file watch that failed is gone, and a watch that could not start may start now: try again, then read
    // (what changed meanwhile is read, not missed).
    if (!this.watch || (live && !live.healthy && !live.recovers)) {
      this.watch?.dispose();
      this.watch = undefined;
      await this.openWatch();
      if (this.disposed) return;
    }
    this.options.read();
    this.schedule();
  }

  /** The watch heard a change: read it now, or after a pause that every later change until then shares. */
  private changed(): void {
    if (this.disposed) return;
    const settleMs = this.settleMs();
    if (settleMs <= 0) {
      this.settling?.cancel();
      this.settling = undefined;
      this.options.read();
      return;
    }
    if (this.settling) return; // the read already due will see this change too
    const pause = Math.floor((this.options.random ?? Math.random)() * settleMs);
    this.settling = this.options.clock.setTimer(pause, () => {
      this.settling = undefined;
      if (!this.disposed) this.options.read();
    });
  }

  /** The option's answer; 0 (read at once) when there is none or it throws: a pause never costs a read. */
  private settleMs(): number {
    try {
      const ms = this.options.settleMs?.() ?? 0;
      return Number.isFinite(ms) && ms > 0 ? ms : 0;
    } catch {
      return 0;
    }
  }

  private async openWatch(): Promise<void> {
    let watch: Watch | undefined;
    try {
      watch = await this.options.open(() => this.changed(), { interest: this.options.interest, onHealth: () => this.schedule() });
    } catch (error) {
      this.options.onOpenFailed?.(error);
    }
    if (this.disposed) watch?.dispose();
    else this.watch = watch;
  }
}
