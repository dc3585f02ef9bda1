// What a finished mocha run counts, for every runner that reports a tally line (scripts/tally-reporter.cjs, and the
// VS Code extension host's test index): the one place that reads a mocha tree into passed, failed, skipped and the
// behaviours that ran.
//
// Honest counts:
//  - a test that never ran because a hook failed (a `before all`, `before each` or `after each` hook stops the rest of
//    its suite) counts as failed: a failed hook never makes its tests vanish from the count. The hook's own failure is
//    then not counted again; a hook whose failure stopped no test (an `after all`) counts as one failure itself;
//  - a behaviour is a test's title path, so the same test on another VS Code host counts once. A suite marked with
//    behaviourGroup(suite, GROUP) (test/helpers/behaviours.ts) is keyed by GROUP instead of its own title and
//    everything above it (which name the driver or host), so the same test on every backend counts once.
const crypto = require('node:crypto');

/** The title path that identifies a test's behaviour (see the rules above). */
function behaviourTitles(test) {
  const titles = [test.title];
  for (let suite = test.parent; suite && !suite.root; suite = suite.parent) {
    if (suite.lockstepBehaviourGroup) {
      titles.push(suite.lockstepBehaviourGroup);
      break;
    }
    titles.push(suite.title);
  }
  return titles.reverse();
}

/** A short hash of a title path: what the tally lines list, so titles (which may name anything) stay out of them. */
function behaviourKey(titles) {
  return crypto.createHash('sha256').update(titles.join('\u0000')).digest('hex').slice(0, 12);
}

function allTests(suite, out = []) {
  out.push(...suite.tests);
  for (const child of suite.suites) allTests(child, out);
  return out;
}

const isPending = test => test.pending || (typeof test.isPending === 'function' && test.isPending());
const ran = test => test.state === 'passed' || test.state === 'failed';

/**
 * Counts a finished run: `root` is the runner's root suite, `failedHooks` the hooks that failed (the runner's `fail`
 * events of type 'hook'), `otherFailures` failures mocha counted that belong to no test or hook (uncaught errors).
 */
function countRun(root, failedHooks = [], otherFailures = 0) {
  const tests = allTests(root);
  let passed = 0,
    failed = 0,
    skipped = 0,
    notRun = 0;
  const behaviours = new Set();
  for (const test of tests) {
    if (test.state === 'passed') passed++;
    else if (test.state === 'failed') failed++;
    else if (isPending(test)) skipped++;
    else notRun++;
    if (ran(test)) behaviours.add(behaviourKey(behaviourTitles(test)));
  }
  const stoppedNothing = failedHooks.filter(hook => !allTests(hook.parent ?? root).some(t => !ran(t) && !isPending(t))).length;
  return {
    passed,
    failed: failed + notRun + stoppedNothing + otherFailures,
    skipped,
    notRun,
    behaviours: [...behaviours].sort(),
    tests: tests.length,
  };
}

/** How many failures a tally line names: enough to tell a run's failures apart, few enough for the summary. */
const MAX_NAMED_FAILURES = 5;

/**
 * One failure as a tally line names it: the title path and the first line of the error, bounded, so that the
 * run's last lines (all a CI page may keep) say which tests failed and why, not only how many.
 */
function failureLine(titlePath, err) {
  const first = String(err?.message ?? err ?? '')
    .split('\n')[0]
    .trim();
  const line = `${titlePath.filter(Boolean).join(' › ')}${first ? ` — ${first}` : ''}`;
  return line.length > 240 ? `${line.slice(0, 239)}…` : line;
}

/** Adds a failure to a list that keeps the first MAX_NAMED_FAILURES. */
function noteFailure(list, titlePath, err) {
  if (list.length < MAX_NAMED_FAILURES) list.push(failureLine(titlePath, err));
}

/** Every test in the tree counted as skipped (mocha --dry-run: what a run that could not happen would have run). */
function countAsSkipped(root) {
  return allTests(root).length;
}

module.exports = { behaviourTitles, behaviourKey, countRun, countAsSkipped, failureLine, noteFailure, MAX_NAMED_FAILURES };
