// Mocha's spec reporter plus one line of counts appended to $LOCKSTEP_TALLY (when set), so that the
// test command can end with a single sum over every suite it ran.
const fs = require('node:fs');
const Mocha = require('mocha');
const { EVENT_RUN_END } = Mocha.Runner.constants;

class TallyReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const file = process.env.LOCKSTEP_TALLY;
      if (!file) return;
      const s = runner.stats || {};
      const line = { suite: process.env.LOCKSTEP_SUITE || 'mocha', passed: s.passes || 0, failed: s.failures || 0, skipped: s.pending || 0 };
      fs.appendFileSync(file, JSON.stringify(line) + '\n');
    });
  }
}
module.exports = TallyReporter;
