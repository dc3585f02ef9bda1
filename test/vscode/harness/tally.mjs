// One line of counts per suite run, appended to $LOCKSTEP_TALLY (scripts/tally.mjs sums them).
import fs from 'node:fs';

/** @param {{suite: string, passed: number, failed: number, skipped: number, note?: string}} line */
export function appendTally(line) {
  const file = process.env.LOCKSTEP_TALLY;
  const { suite, passed, failed, skipped, note } = line;
  console.log(`[tally] ${suite}: ${passed} passed, ${failed} failed, ${skipped} skipped${note ? ` (${note})` : ''}`);
  if (!file) return;
  fs.appendFileSync(file, JSON.stringify(note ? { suite, passed, failed, skipped, note } : { suite, passed, failed, skipped }) + '\n');
}
