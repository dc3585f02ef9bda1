// Mocha's spec reporter plus one line of counts appended to $LOCKSTEP_TALLY (when set), so that the
// test command can end with a single sum over every suite it ran (scripts/tally.mjs).
//
// The line also lists the behaviours that ran (passed or failed), each as a short hash of its title path. A suite
// that marks itself with `behaviourGroup(this, NAME)` (test/helpers/behaviours.ts; the driver contract does) keys
// its tests by NAME and the titles below it, so the same test on every backend counts once.
//
// LOCKSTEP_TALLY_AS_SKIPPED=REASON (with mocha --dry-run) counts every test found as skipped, with REASON as the
// note: how a suite whose server is missing says how many tests it did not run.
const crypto = require('node:crypto');
const fs = require('node:fs');
const Mocha = require('mocha');
const { EVENT_RUN_END, EVENT_TEST_PASS, EVENT_TEST_FAIL } = Mocha.Runner.constants;

function behaviourKey(test) {
  const titles = [test.title];
  for (let suite = test.parent; suite && !suite.root; suite = suite.parent) {
    if (suite.lockstepBehaviourGroup) { titles.push(suite.lockstepBehaviourGroup); break; }
    titles.push(suite.title);
  }
  return crypto.createHash('sha256').update(titles.reverse().join('\u0000')).digest('hex').slice(0, 12);
}

class TallyReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const behaviours = new Set();
    const ran = test => { if (test.type === 'test') behaviours.add(behaviourKey(test)); };
    runner.on(EVENT_TEST_PASS, ran);
    runner.on(EVENT_TEST_FAIL, ran);
    runner.once(EVENT_RUN_END, () => {
      const file = process.env.LOCKSTEP_TALLY;
      if (!file) return;
      const s = runner.stats || {};
      const suite = process.env.LOCKSTEP_SUITE || 'mocha';
      const asSkipped = process.env.LOCKSTEP_TALLY_AS_SKIPPED;
      const line = asSkipped
        ? { suite, passed: 0, failed: 0, skipped: (s.passes || 0) + (s.failures || 0) + (s.pending || 0), note: asSkipped }
        : { suite, passed: s.passes || 0, failed: s.failures || 0, skipped: s.pending || 0, behaviours: [...behaviours].sort() };
      fs.appendFileSync(file, JSON.stringify(line) + '\n');
    });
  }
}
module.exports = TallyReporter;
