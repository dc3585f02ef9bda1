import * as assert from 'node:assert/strict';
import { checkLeaseLog, type LogLine } from '../../chaos/checkLeaseLog';

const enter = (pid: number, token: number, start: number, expires = start + 1000): LogLine => ({
  kind: 'enter',
  pid,
  name: 'n',
  token,
  start,
  expires,
});
const exit = (pid: number, token: number, end: number): LogLine => ({ kind: 'exit', pid, name: 'n', token, end });
const OPTIONS = { slackMs: 100, runEnd: 10_000 };

describe('chaos: the plain-lease invariants of a run log', () => {
  it('accepts sections one after another with rising tokens, and a killed holder replaced within TTL + slack', () => {
    const v = checkLeaseLog(
      [enter(1, 1, 0), exit(1, 1, 10), enter(2, 2, 20), { kind: 'kill', pid: 2, at: 25 }, enter(3, 3, 1050), exit(3, 3, 1060)],
      OPTIONS,
    );
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
    const v = checkLeaseLog(
      [
        enter(1, 1, 0),
        { kind: 'kill', pid: 1, at: 5 },
        { kind: 'want', pid: 2, name: 'n', at: 500 },
        enter(2, 2, 1500),
        exit(2, 2, 1510),
        { kind: 'error', pid: 3, documented: false, error: 'TypeError' },
      ],
      OPTIONS,
    );
    assert.match(v.violations.join('\n'), /blocked it 500 ms past its expiry/);
    assert.match(v.violations.join('\n'), /undocumented error: TypeError/);
  });

  it('still counts one long attempt that began long before the expiry among many short ones (waits are read by start)', () => {
    const lines: LogLine[] = [enter(1, 1, 0), { kind: 'kill', pid: 1, at: 5 }, { kind: 'want', pid: 9, name: 'n', at: 10 }];
    // Short attempts of other workers, each refused at once, all before the killed holder's expiry at 1000.
    for (let i = 0; i < 200; i++)
      lines.push({ kind: 'want', pid: 100 + i, name: 'n', at: 20 + i * 4 }, { kind: 'busy', pid: 100 + i, name: 'n', at: 21 + i * 4 });
    lines.push(enter(9, 2, 3000), exit(9, 2, 3010));
    assert.match(
      checkLeaseLog(lines, OPTIONS).violations.join('\n'),
      /blocked it 2000 ms past its expiry \(a worker waited 2000 ms of it\)/,
    );
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

  it("measures a killed holder's block from the first wish for its name when nobody was waiting at its expiry", () => {
    const want = (pid: number, at: number): LogLine => ({ kind: 'want', pid, name: 'n', at });
    const killed = [enter(1, 1, 0), { kind: 'kill', pid: 1, at: 5 } as LogLine];
    assert.deepEqual(checkLeaseLog([...killed, want(2, 3000), enter(2, 2, 3050), exit(2, 2, 3060)], OPTIONS).violations, []);
    assert.match(
      checkLeaseLog([...killed, want(2, 3000), enter(2, 2, 3200), exit(2, 2, 3210)], OPTIONS).violations.join('\n'),
      /blocked it 2200 ms past its expiry/,
    );
    // A waiter that was itself killed before the next entry does not count as waiting.
    const gone = [want(3, 500), { kind: 'kill', pid: 3, at: 600 } as LogLine];
    assert.deepEqual(checkLeaseLog([...killed, ...gone, want(2, 3000), enter(2, 2, 3050), exit(2, 2, 3060)], OPTIONS).violations, []);
  });

  it('judges the killed-holder bound by attempts: an interrupted one does not count, a long one does even without a next holder', () => {
    const want = (pid: number, at: number, name = 'n'): LogLine => ({ kind: 'want', pid, name, at });
    const killed = [enter(1, 1, 0), { kind: 'kill', pid: 1, at: 5 } as LogLine];
    // Its connection killed at 1050, the waiter turns to another name: nobody waited for n until 2900.
    const interrupted = [
      want(2, 900),
      { kind: 'error', pid: 2, name: 'n', at: 1050, documented: true, error: 'LockBackendError/backend' } as LogLine,
      want(2, 1100, 'm'),
      want(3, 2900),
    ];
    assert.deepEqual(checkLeaseLog([...killed, ...interrupted, enter(3, 2, 2950), exit(3, 2, 2960)], OPTIONS).violations, []);
    // A waiter killed before anyone entered still waited: 400 ms past the expiry, more than the slack.
    assert.match(
      checkLeaseLog(
        [...killed, want(2, 900), { kind: 'kill', pid: 2, at: 1400 }, want(3, 2900), enter(3, 2, 2950), exit(3, 2, 2960)],
        OPTIONS,
      ).violations.join('\n'),
      /blocked it 1950 ms past its expiry \(a worker waited 400 ms of it\)/,
    );
    // Busy after its whole wait while nobody ever entered again: blocked up to the end of the run.
    assert.match(
      checkLeaseLog([...killed, want(2, 900), { kind: 'busy', pid: 2, name: 'n', at: 5900 }], OPTIONS).violations.join('\n'),
      /waited 4900 ms/,
    );
  });

  it("does not count the time the harness had the backend down (a restart or a pause) as the killed holder's block", () => {
    const killed = [enter(1, 1, 0), { kind: 'kill', pid: 1, at: 5 } as LogLine, { kind: 'want', pid: 2, name: 'n', at: 900 } as LogLine];
    const after = [enter(2, 2, 1250), exit(2, 2, 1260)];
    assert.match(checkLeaseLog([...killed, ...after], OPTIONS).violations.join('\n'), /waited 250 ms/);
    assert.deepEqual(checkLeaseLog([...killed, { kind: 'outage', pid: 0, from: 1050, to: 1200 }, ...after], OPTIONS).violations, []);
  });
});
