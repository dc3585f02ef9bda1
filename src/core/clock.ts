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
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep: (ms, signal) => new Promise<void>(resolve => {
    if (signal?.aborted) { resolve(); return; }
    const done = () => { clearTimeout(timer); signal?.removeEventListener('abort', done); resolve(); };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  }),
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

  now(): number { return this.wall; }
  monotonic(): number { return this.mono; }

  advance(ms: number): void {
    this.wall += ms;
    this.mono += ms;
  }

  /** Moves wall time only, as an NTP step would. */
  stepWall(ms: number): void { this.wall += ms; }

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
