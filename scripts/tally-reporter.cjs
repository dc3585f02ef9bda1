// Mocha's spec reporter plus one line of counts appended to $LOCKSTEP_TALLY (when set), so that the
// test command can end with a single sum over every suite it ran (scripts/tally.mjs).
//
// The counts and the behaviours (each a short hash of a test's title path) come from scripts/test-counts.cjs: a test
// that a failed hook kept from running counts as failed, and a suite marked with `behaviourGroup(this, NAME)`
// (test/helpers/behaviours.ts; the driver contract does) keys its tests by NAME and the titles below it, so the same
// test on every backend counts once.
//
// LOCKSTEP_TALLY_AS_SKIPPED=REASON (with mocha --dry-run) counts every test found as skipped, with REASON as the
// note: how a suite whose server is missing says how many tests it did not run.
const fs = require('node:fs');
const Mocha = require('mocha');
const { countRun, countAsSkipped, noteFailure } = require('./test-counts.cjs');
const { EVENT_RUN_END, EVENT_TEST_FAIL } = Mocha.Runner.constants;

class TallyReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const failedHooks = [];
    const failures = [];
    let otherFailures = 0;
    runner.on(EVENT_TEST_FAIL, (runnable, err) => {
      noteFailure(failures, runnable.titlePath(), err);
      if (runnable.type === 'hook') failedHooks.push(runnable);
      else if (runnable.type !== 'test') otherFailures++;
    });
    runner.once(EVENT_RUN_END, () => {
      const file = process.env.LOCKSTEP_TALLY;
      const suite = process.env.LOCKSTEP_SUITE || 'mocha';
      const asSkipped = process.env.LOCKSTEP_TALLY_AS_SKIPPED;
      const counts = asSkipped ? undefined : countRun(runner.suite, failedHooks, otherFailures);
      if (counts && counts.notRun > 0) {
        console.log(`\n  ${counts.notRun} test(s) did not run because a hook failed: counted as failed`);
      }
      if (!file) return;
      const line = asSkipped
        ? { suite, passed: 0, failed: 0, skipped: countAsSkipped(runner.suite), note: asSkipped }
        : {
            suite,
            passed: counts.passed,
            failed: counts.failed,
            skipped: counts.skipped,
            behaviours: counts.behaviours,
            ...(failures.length > 0 ? { failures } : {}),
          };
      fs.appendFileSync(file, `${JSON.stringify(line)}\n`);
    });
  }
}
module.exports = TallyReporter;
