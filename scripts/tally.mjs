// The test command's accounting: sums the per-runner lines that the tally reporter and the other runners append
// to $LOCKSTEP_TALLY, so that the last line and the exit status always agree.
//
//   node scripts/tally.mjs FILE                 a table, the distinct behaviours, and last `N passed, N failed, N skipped`;
//                                               exits 1 when N failed > 0
//   node scripts/tally.mjs --counts FILE [--from LINES]
//                                               `PASSED FAILED SKIPPED LINES` over the lines after the first LINES
//
// Every line is read strictly: a line that is not a JSON object with a suite name and three non-negative integer
// counts is one failure, and so is a line whose runner ran zero tests (nothing passed, failed or was skipped).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One tally line, checked; never throws. */
export function readLine(text, index) {
  let line;
  try {
    line = JSON.parse(text);
  } catch {
    return { suite: `line ${index + 1}`, passed: 0, failed: 1, skipped: 0, note: `unreadable tally line: ${text.slice(0, 80)}` };
  }
  const count = v => Number.isInteger(v) && v >= 0;
  if (
    !line ||
    typeof line !== 'object' ||
    typeof line.suite !== 'string' ||
    !count(line.passed) ||
    !count(line.failed) ||
    !count(line.skipped)
  ) {
    return {
      suite: typeof line?.suite === 'string' ? line.suite : `line ${index + 1}`,
      passed: 0,
      failed: 1,
      skipped: 0,
      note: `unreadable tally line: ${text.slice(0, 80)}`,
    };
  }
  if (line.passed + line.failed + line.skipped === 0) {
    return { ...line, failed: 1, note: [line.note, 'ran zero tests'].filter(Boolean).join('; ') };
  }
  return line;
}

/** The checked lines of a tally file after its first `from` lines (a missing file has none). */
export function readTally(file, from = 0) {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  return text
    .split('\n')
    .slice(from)
    .filter(l => l.trim() !== '')
    .map(readLine);
}

/**
 * Sums checked lines. Behaviours: distinct titles from runners that list them (passed or failed), plus the tests
 * that passed in runners that do not list titles (their failed count may be a crash, not a test).
 */
export function sum(lines) {
  const titles = new Set();
  let passed = 0,
    failed = 0,
    skipped = 0,
    unlisted = 0;
  for (const l of lines) {
    passed += l.passed;
    failed += l.failed;
    skipped += l.skipped;
    if (Array.isArray(l.behaviours)) for (const b of l.behaviours) titles.add(b);
    else unlisted += l.passed;
  }
  return { passed, failed, skipped, behaviours: titles.size + unlisted };
}

function main(argv) {
  if (argv[0] === '--counts') {
    const from = argv[2] === '--from' ? Number(argv[3]) : 0;
    const lines = readTally(argv[1], from);
    const s = sum(lines);
    console.log(`${s.passed} ${s.failed} ${s.skipped} ${lines.length}`);
    return 0;
  }
  const lines = readTally(argv[0]);
  console.log('\nSuites:');
  for (const l of lines) {
    const note = l.note ? `  (${l.note})` : '';
    console.log(
      `  ${l.suite.padEnd(28)} ${String(l.passed).padStart(5)} passed ${String(l.failed).padStart(4)} failed ${String(l.skipped).padStart(4)} skipped${note}`,
    );
  }
  const named = lines.filter(l => Array.isArray(l.failures) && l.failures.length > 0);
  if (named.length > 0) {
    console.log('\nFailed tests (the first few of each runner, with the first line of the error):');
    for (const l of named) for (const f of l.failures) console.log(`  ${l.suite}: ${f}`);
  }
  const s = sum(lines);
  if (lines.length === 0) s.failed += 1; // nothing reported at all is not a pass
  console.log(`${s.behaviours} distinct behaviours ran (a test title counts once, however many backends or hosts ran it)`);
  console.log(`${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped`);
  return s.failed > 0 ? 1 : 0;
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
