/**
 * Time, injected. Wall time (`now`, epoch milliseconds) is what records store; monotonic time
 * (`monotonic`) bounds waits so that a wall-clock step never lengthens or shortens a wait.
 */
export interface Clock {
  /** Wall-clock time in epoch milliseconds. */
  now(): number;
  /** Monotonic milliseconds from an arbitrary origin. */
  monotonic(): number;
  /** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `fn` once after `ms` of monotonic time, unless cancelled first. `fn` must not throw.
   * The system clock's timers do not keep the process alive unless `keepAlive` is set.
   */
  setTimer(ms: number, fn: () => void, options?: { keepAlive?: boolean }): Timer;
}

export interface Timer {
  /** Stops the timer if it has not fired yet. Safe to call twice. */
  cancel(): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>(resolve => {
      if (signal?.aborted) {
        resolve();
        return;
      }
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    }),
  setTimer: (ms, fn, options) => {
    const timer = setTimeout(fn, Math.max(0, ms));
    // unref: a pending timer never keeps a CLI process alive (Node only; the webview build shares this file).
    if (!options?.keepAlive) (timer as { unref?: () => void }).unref?.();
    return { cancel: () => clearTimeout(timer) };
  },
};

/**
 * A clock that moves only when told to. `sleep` advances time itself, so code that waits against a
 * deadline runs to completion instantly and deterministically in tests.
 */
export class ManualClock implements Clock {
  private wall: number;
  private mono = 0;
  /** Every sleep requested, in order, for tests that assert the retry cadence. */
  readonly sleeps: number[] = [];

  constructor(startEpochMs = Date.UTC(2026, 0, 1)) {
    this.wall = startEpochMs;
  }

  now(): number {
    return this.wall;
  }
  monotonic(): number {
    return this.mono;
  }

  /** Timers not fired yet, by due monotonic time. */
  private timers: { due: number; seq: number; fn: () => void }[] = [];
  private seq = 0;

  /** Moves wall and monotonic time, firing (in due order) every timer that falls due. */
  advance(ms: number): void {
    const target = this.mono + ms;
    for (;;) {
      const next = this.timers.filter(t => t.due <= target).sort((x, y) => x.due - y.due || x.seq - y.seq)[0];
      if (next === undefined) break;
      this.timers = this.timers.filter(t => t !== next);
      this.wall += next.due - this.mono;
      this.mono = next.due;
      next.fn();
    }
    this.wall += target - this.mono;
    this.mono = target;
  }

  setTimer(ms: number, fn: () => void): Timer {
    const timer = { due: this.mono + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return {
      cancel: () => {
        this.timers = this.timers.filter(t => t !== timer);
      },
    };
  }

  /** Milliseconds until the next timer falls due; undefined when none waits (tests step from timer to timer). */
  get nextTimerIn(): number | undefined {
    if (this.timers.length === 0) return undefined;
    return Math.min(...this.timers.map(t => t.due)) - this.mono;
  }

  /** How many timers are waiting (tests check that nothing is left behind). */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves wall time only, as an NTP step would. */
  stepWall(ms: number): void {
    this.wall += ms;
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return;
    this.sleeps.push(ms);
    this.advance(ms);
    await Promise.resolve();
  }
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
