/** Polls `check` until it returns true; fails with `what` once `timeoutMs` has passed. No fixed sleeps. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise(resolve => setTimeout(resolve, 50));
  }
}
