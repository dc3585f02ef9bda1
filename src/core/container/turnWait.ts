import type { Clock } from '../clock';
import type { Watch, WatchInterest } from '../stores/store';

/** A waiter's interest: a polling watch (git, SQL) keeps its fast pace for the whole wait. */
export const WAITING: WatchInterest = { holds: false, waits: true };

/**
 * How a waiter (`acquire --wait`, `lockstep wait`) sleeps between two reads of the page: until the
 * driver announces a change (Redis pub/sub, the file driver's file-system watch, PostgreSQL NOTIFY,
 * the git and SQL fast poll), or the backup poll's interval passes, or the deadline. The backup is
 * what a lost announcement costs: the change is read at the next interval instead.
 *
 * The watch starts at the first sleep, which then returns at once (a change between the read that
 * found the lock busy and the watch's start is read, not missed), so a call that never waits watches
 * nothing. An announcement that arrives while the waiter reads is kept: the next sleep returns at
 * once, so no wake-up falls between a read and a sleep.
 */
export class ChangeWaiter {
  private changed = false;
  private wake: (() => void) | undefined;
  private started = false;
  private watch: Watch | undefined;
  private disposed = false;

  /** `watch` starts the driver's watch (resolving undefined, or failing: the waiter only polls). */
  constructor(
    private readonly openWatch: (onChange: () => void) => Promise<Watch | undefined>,
    private readonly clock: Clock,
  ) {}

  /** Whether the driver announces changes to this waiter (false: every sleep runs its full interval). */
  get announced(): boolean {
    return this.watch !== undefined;
  }

  /**
   * Sleeps up to `ms`: `changed` when an announcement came (during the sleep or since the last one)
   * or the watch has just started, `elapsed` when the interval passed or `signal` aborted.
   */
  async sleep(ms: number, signal?: AbortSignal): Promise<'changed' | 'elapsed'> {
    if (!this.started) {
      this.started = true;
      const watch = await this.openWatch(() => this.announce()).catch(() => undefined);
      if (this.disposed) watch?.dispose();
      else this.watch = watch;
      return 'changed';
    }
    if (!this.changed && !signal?.aborted && !this.disposed) {
      const controller = new AbortController();
      const abort = () => controller.abort();
      this.wake = abort;
      signal?.addEventListener('abort', abort, { once: true });
      try {
        await this.clock.sleep(ms, controller.signal);
      } finally {
        this.wake = undefined;
        signal?.removeEventListener('abort', abort);
      }
    }
    const changed = this.changed;
    this.changed = false;
    return changed ? 'changed' : 'elapsed';
  }

  /** Stops the watch; a sleep under way returns. Safe to call twice. */
  dispose(): void {
    this.disposed = true;
    this.watch?.dispose();
    this.watch = undefined;
    this.wake?.();
  }

  private announce(): void {
    if (this.disposed) return;
    this.changed = true;
    this.wake?.();
  }
}
