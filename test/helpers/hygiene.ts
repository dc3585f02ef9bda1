import * as assert from 'node:assert/strict';
import { inspect } from 'node:util';

/** Every way an error can reach a log, a JSON response or a terminal. */
export function renderings(error: unknown): string[] {
  const out = [String(error), inspect(error, { depth: Infinity, showHidden: true })];
  if (error instanceof Error) {
    out.push(error.message, error.stack ?? '');
    const own: Record<string, unknown> = {};
    for (const key of Object.getOwnPropertyNames(error)) {
      const value = (error as unknown as Record<string, unknown>)[key];
      own[key] = value instanceof Error ? inspect(value, { depth: Infinity, showHidden: true }) : value;
    }
    out.push(JSON.stringify(own), JSON.stringify(error));
    if (error.cause !== undefined) out.push(...renderings(error.cause));
  }
  return out;
}

/** Asserts that none of `secrets` (lock names, owner tokens, backend keys) appears in any rendering of `error`. */
export function assertHygienic(error: unknown, secrets: readonly string[], where: string): void {
  for (const text of renderings(error)) {
    for (const secret of secrets) {
      assert.ok(!text.includes(secret), `${where}: an error rendering contains ${secret.slice(0, 12)}…:\n${text.slice(0, 600)}`);
    }
  }
}
