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
    const v = checkLeaseLog([enter(1, 1, 0), { kind: 'kill', pid: 1, at: 5 }, { kind: 'want', pid: 2, name: 'n', at: 500 }, enter(2, 2, 1500), exit(2, 2, 1510),
      { kind: 'error', pid: 3, documented: false, error: 'TypeError' }], OPTIONS);
    assert.match(v.violations.join('\n'), /blocked it 500 ms past its expiry/);
    assert.match(v.violations.join('\n'), /undocumented error: TypeError/);
  });

  it('counts a holder still working after its own lease expired as an overrun, not an overlap, and still checks its token', () => {
    const v = checkLeaseLog([enter(1, 1, 0), enter(2, 2, 1001), exit(1, 1, 1500), exit(2, 2, 1510)], OPTIONS);
    assert.deepEqual(v.violations, []);
    assert.equal(v.overran, 1);
    const stale = checkLeaseLog([enter(1, 2, 0), enter(2, 1, 1001), exit(1, 2, 1500), exit(2, 1, 1510)], OPTIONS);
    assert.match(stale.violations.join('\n'), /do not increase/);
  });

  it('reports an overlap that starts before the earlier lease expired, even when that holder overran', () => {
    const v = checkLeaseLog([enter(1, 1, 0), enter(2, 2, 999), exit(1, 1, 1500), exit(2, 2, 1510)], OPTIONS);
    assert.match(v.violations.join('\n'), /overlap while both leases are live .* by 1\.000 ms/);
  });

  it('measures a killed holder\'s block from the first wish for its name when nobody was waiting at its expiry', () => {
    const want = (pid: number, at: number): LogLine => ({ kind: 'want', pid, name: 'n', at });
    const killed = [enter(1, 1, 0), { kind: 'kill', pid: 1, at: 5 } as LogLine];
    assert.deepEqual(checkLeaseLog([...killed, want(2, 3000), enter(2, 2, 3050), exit(2, 2, 3060)], OPTIONS).violations, []);
    assert.match(checkLeaseLog([...killed, want(2, 3000), enter(2, 2, 3200), exit(2, 2, 3210)], OPTIONS).violations.join('\n'), /blocked it 2200 ms past its expiry/);
    // A waiter that was itself killed before the next entry does not count as waiting.
    const gone = [want(3, 500), { kind: 'kill', pid: 3, at: 600 } as LogLine];
    assert.deepEqual(checkLeaseLog([...killed, ...gone, want(2, 3000), enter(2, 2, 3050), exit(2, 2, 3060)], OPTIONS).violations, []);
  });
});
