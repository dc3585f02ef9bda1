import * as assert from 'node:assert/strict';
import { checkLeaseLog, type LogLine } from '../../chaos/checkLeaseLog';

const enter = (pid: number, token: number, start: number, expires = start + 1000): LogLine => ({ kind: 'enter', pid, name: 'n', token, start, expires });
const exit = (pid: number, token: number, end: number): LogLine => ({ kind: 'exit', pid, name: 'n', token, end });
const OPTIONS = { slackMs: 100, runEnd: 10_000 };

describe('chaos: the plain-lease invariants of a run log', () => {
  it('accepts sections one after another with rising tokens, and a killed holder replaced within TTL + slack', () => {
    const v = checkLeaseLog([enter(1, 1, 0), exit(1, 1, 10), enter(2, 2, 20), { kind: 'kill', pid: 2, at: 25 }, enter(3, 3, 1050), exit(3, 3, 1060)], OPTIONS);
    assert.deepEqual(v.violations, []);
    assert.equal(v.sections, 3);
    assert.equal(v.killedHolders, 1);
  });

  it('reports two sections of one name that overlap', () => {
    const v = checkLeaseLog([enter(1, 1, 0), enter(2, 2, 5), exit(1, 1, 10), exit(2, 2, 12)], OPTIONS);
    assert.match(v.violations.join('\n'), /overlap/);
  });

  it('reports fencing tokens that do not increase in order of entry', () => {
    const v = checkLeaseLog([enter(1, 2, 0), exit(1, 2, 10), enter(2, 1, 20), exit(2, 1, 30)], OPTIONS);
    assert.match(v.violations.join('\n'), /do not increase/);
  });

  it('reports a killed holder that blocked its name past its expiry plus slack, and undocumented errors', () => {
    const v = checkLeaseLog([enter(1, 1, 0), { kind: 'kill', pid: 1, at: 5 }, enter(2, 2, 1500), exit(2, 2, 1510),
      { kind: 'error', pid: 3, documented: false, error: 'TypeError' }], OPTIONS);
    assert.match(v.violations.join('\n'), /blocked it 500 ms past its expiry/);
    assert.match(v.violations.join('\n'), /undocumented error: TypeError/);
  });
});
