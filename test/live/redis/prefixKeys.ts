import type Redis from 'ioredis';

/** Every key under `prefix:` (SCAN, never KEYS, so a shared server is not blocked). */
export async function keysUnder(admin: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    found.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/** Removes only this run's keys, then returns how many remain (expected: zero). */
export async function removeKeysUnder(admin: Redis, prefix: string): Promise<number> {
  const keys = await keysUnder(admin, prefix);
  if (keys.length > 0) await admin.del(...keys);
  return (await keysUnder(admin, prefix)).length;
}

/** A random prefix per run, so a shared server is never touched outside it. */
export function randomPrefix(): string {
  return `lockstep-test-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
}
