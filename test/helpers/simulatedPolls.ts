import type { ManualClock } from '../../src/core/clock';

/**
 * Drives a poller on a ManualClock through simulated time, timer by timer: between two timers it
 * waits (real time, bounded) until the poll that the last timer started has finished and scheduled
 * the next one — a fake remote answers at once, a real `git ls-remote` takes its few milliseconds,
 * and no simulated time passes meanwhile. `until` is a monotonic instant of the clock.
 */
export async function runUntil(clock: ManualClock, until: number, options: { settleTimeoutMs?: number } = {}): Promise<void> {
  const settleTimeoutMs = options.settleTimeoutMs ?? 10_000;
  for (;;) {
    await settled(clock, settleTimeoutMs);
    const next = clock.nextTimerIn;
    const left = until - clock.monotonic();
    if (left <= 0) return;
    clock.advance(next === undefined ? left : Math.min(next, left));
  }
}

/** Waits until a timer is pending again (the running poll scheduled its successor), or gives up. */
async function settled(clock: ManualClock, timeoutMs: number): Promise<void> {
  // A fake remote answers within a few microtasks; a real git process needs the event loop.
  for (let i = 0; i < 20 && clock.pendingTimers === 0; i++) await Promise.resolve();
  if (clock.pendingTimers > 0) return;
  const deadline = performance.now() + timeoutMs;
  await new Promise<void>(resolve => setImmediate(resolve));
  while (clock.pendingTimers === 0 && performance.now() < deadline) {
    await new Promise<void>(resolve => setTimeout(resolve, 1));
  }
}

/** A deterministic jitter source in [0, 1) (a linear congruential generator), so runs repeat. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}
