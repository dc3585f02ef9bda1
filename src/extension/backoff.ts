/** Retry delays after consecutive failures: 1 s, 2 s, 4 s, … capped. Pure. */
export function backoffDelay(failures: number, capMs = 30_000, baseMs = 1_000): number {
  return Math.min(capMs, baseMs * 2 ** Math.max(0, failures - 1));
}
