import { exportedSlowdown } from '../../helpers/calibration';

/**
 * Polls `check` until it returns true; fails with `what` once `timeoutMs`, scaled by the run's slowdown factor
 * (test/helpers/calibration.ts, set for the host by index.ts), has passed. No fixed sleeps.
 */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const limit = Math.ceil(timeoutMs * (exportedSlowdown() ?? 1));
  const deadline = Date.now() + limit;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${limit} ms waiting for: ${what}`);
    await new Promise(resolve => setTimeout(resolve, 50));
  }
}
