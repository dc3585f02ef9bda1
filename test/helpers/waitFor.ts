import { scaled } from './calibration';

/**
 * Polls `condition` until it returns a value other than `undefined`/`false`, or throws when the
 * deadline passes. For tests where real time must pass (TTL expiry across processes, a child
 * getting ready): the test waits for the condition itself, never for a fixed time. The deadline
 * (`timeoutMs`, as chosen on an unloaded machine) is scaled by the run's slowdown factor
 * (test/helpers/calibration.ts), so a busy machine gets more time, never a different verdict.
 */
export async function waitFor<T>(
  condition: () => T | undefined | false | Promise<T | undefined | false>,
  options: { timeoutMs?: number; intervalMs?: number; description?: string } = {},
): Promise<T> {
  const intervalMs = options.intervalMs ?? 20;
  const started = performance.now();
  // Scaled only once the condition did not hold at once: a condition that holds on an injected clock (the unit
  // suite) costs no calibration, whose measuring would count in the test's CPU time.
  let timeoutMs: number | undefined;
  for (;;) {
    const value = await condition();
    if (value !== undefined && value !== false) return value;
    timeoutMs ??= scaled(options.timeoutMs ?? 10_000);
    if (performance.now() >= started + timeoutMs) {
      throw new Error(`waitFor: ${options.description ?? 'condition'} did not hold within ${timeoutMs} ms`);
    }
    await new Promise(resolve => setTimeout(resolve, intervalMs));
  }
}
