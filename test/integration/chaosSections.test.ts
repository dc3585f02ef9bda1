import * as assert from 'node:assert/strict';
import { childEnv, runTs } from '../helpers/children';

/** `npm run chaos -- --sections S`: a long run sized by its proof rather than by the clock (README, the long run). */
describe('chaos harness: --sections', function () {
  this.timeout(120_000);

  it("ends a driver's run once it holds that many critical sections, long before its minutes", async () => {
    const run = await runTs(
      'chaos/run.ts',
      ['--minutes', '10', '--sections', '40', '--workers', '4', '--names', '1', '--drivers', 'file'],
      childEnv({}),
      90_000,
    );
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const row = /file\s+(\d+) s\s+(\d+) critical sections/.exec(run.stdout);
    assert.ok(row, run.stdout);
    assert.ok(Number(row[2]) >= 40, `${row[2]} critical sections`);
    assert.ok(Number(row[1]) < 600, `the run lasted ${row[1]} s of its 600`);
  });

  it('refuses a count that is not a whole number above 0 (exit 2) and runs nothing', async () => {
    for (const bad of ['0', '-5', 'many', '1.5']) {
      const run = await runTs('chaos/run.ts', [`--sections=${bad}`, '--drivers', 'file'], childEnv({}), 30_000);
      assert.equal(run.code, 2, `--sections ${bad}: ${run.stdout}${run.stderr}`);
      assert.match(run.stderr, /--sections must be a whole number above 0/);
      assert.doesNotMatch(run.stdout, /critical sections/);
    }
  });
});
