// Sums the per-suite lines written by the tally reporter and the other suite runners.
// usage: node scripts/tally.mjs TALLY_FILE  → prints a table and, last, `N passed, N failed, N skipped`.
import fs from 'node:fs';

const file = process.argv[2];
const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map(l => JSON.parse(l)) : [];
let passed = 0, failed = 0, skipped = 0;
console.log('\nSuites:');
for (const l of lines) {
  passed += l.passed; failed += l.failed; skipped += l.skipped;
  const note = l.note ? `  (${l.note})` : '';
  console.log(`  ${l.suite.padEnd(28)} ${String(l.passed).padStart(5)} passed ${String(l.failed).padStart(4)} failed ${String(l.skipped).padStart(4)} skipped${note}`);
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
