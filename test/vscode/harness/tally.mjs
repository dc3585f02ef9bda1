// One line of counts per suite run, appended to $LOCKSTEP_TALLY (scripts/tally.mjs sums them).
import fs from 'node:fs';
import { createRequire } from 'node:module';

const { behaviourKey, noteFailure } = createRequire(import.meta.url)('../../../scripts/test-counts.cjs');

/** Adds a failed test to a tally line's `failures` (scripts/test-counts.cjs: the first few, bounded). */
export { noteFailure };

/** The behaviour key (scripts/test-counts.cjs) of a test known only by its title path, such as a UI test. */
export const keyOf = (...titles) => behaviourKey(titles);

/**
 * @param {{suite: string, passed: number, failed: number, skipped: number, note?: string, behaviours?: string[], failures?: string[]}} line
 * `behaviours`: the keys of the tests that ran, so that the same test on another host counts once; `failures`: the
 * first failed tests, each with the first line of its error.
 */
export function appendTally(line) {
  const file = process.env.LOCKSTEP_TALLY;
  const { suite, passed, failed, skipped, note, behaviours, failures } = line;
  console.log(`[tally] ${suite}: ${passed} passed, ${failed} failed, ${skipped} skipped${note ? ` (${note})` : ''}`);
  if (!file) return;
  fs.appendFileSync(
    file,
    `${JSON.stringify({
      suite,
      passed,
      failed,
      skipped,
      ...(note ? { note } : {}),
      ...(behaviours ? { behaviours } : {}),
      ...(failures?.length ? { failures } : {}),
    })}\n`,
  );
}
