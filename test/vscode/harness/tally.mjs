// One line of counts per suite run, appended to $LOCKSTEP_TALLY (scripts/tally.mjs sums them).
import fs from 'node:fs';
import { createRequire } from 'node:module';

const { behaviourKey } = createRequire(import.meta.url)('../../../scripts/test-counts.cjs');

/** The behaviour key (scripts/test-counts.cjs) of a test known only by its title path, such as a UI test. */
export const keyOf = (...titles) => behaviourKey(titles);

/**
 * @param {{suite: string, passed: number, failed: number, skipped: number, note?: string, behaviours?: string[]}} line
 * `behaviours`: the keys of the tests that ran, so that the same test on another host counts once.
 */
export function appendTally(line) {
  const file = process.env.LOCKSTEP_TALLY;
  const { suite, passed, failed, skipped, note, behaviours } = line;
  console.log(`[tally] ${suite}: ${passed} passed, ${failed} failed, ${skipped} skipped${note ? ` (${note})` : ''}`);
  if (!file) return;
  fs.appendFileSync(
    file,
    `${JSON.stringify({ suite, passed, failed, skipped, ...(note ? { note } : {}), ...(behaviours ? { behaviours } : {}) })}\n`,
  );
}
