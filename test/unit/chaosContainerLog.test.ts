import * as assert from 'node:assert/strict';
import { checkContainerLog, type ContainerRun } from '../../chaos/checkContainerLog';
import type { AuditLine } from '../../src/core/lockRecord';

const line = (action: AuditLine['action'], grant: number, at: number, outcome: AuditLine['outcome'] = 'done'): AuditLine => ({
  at,
  who: 'a@example.com',
  action,
  grant,
  outcome,
});
const base: ContainerRun = {
  audit: [line('acquire', 1, 0), line('release', 1, 500), line('acquire', 2, 600), line('clear', 2, 2000), line('acquire', 3, 2100)],
  holders: [],
  acquireTtlMs: 1000,
  heartbeatTtlMs: 60_000,
  acquired: [1, 2, 3],
  minted: [1, 2, 3],
  cleared: [2],
  pushes: [{ sha: 'aaa', at: 100 }],
  landings: [{ at: 300, sha: 'aaa', grant: 1 }],
};

describe('chaos: the container-protocol invariants of a run', () => {
  it('accepts handovers by release, expiry and clear, unique identifiers, and a landing under the live grant', () => {
    assert.deepEqual(checkContainerLog(base).violations, []);
    assert.equal(checkContainerLog(base).grants, 3);
  });

  it('reports a second holder while a heartbeat kept the first one live', () => {
    const v = checkContainerLog({
      ...base,
      audit: [line('acquire', 1, 0), line('heartbeat', 1, 900), line('acquire', 2, 1200)],
      acquired: [],
      cleared: [],
      landings: [],
    });
    assert.match(v.violations.join('\n'), /two live holders: grant #2/);
  });

  it('reports a second holder while the observed record still had the first one live', () => {
    const v = checkContainerLog({
      ...base,
      audit: [line('acquire', 1, 0), line('acquire', 2, 1200)],
      holders: [{ grant: 1, grantedAt: 0, expiresAt: 1500 }],
      acquired: [],
      cleared: [],
      landings: [],
    });
    assert.match(v.violations.join('\n'), /two live holders/);
  });

  it('reports a grant issued twice or out of order, and an identifier minted twice', () => {
    const v = checkContainerLog({
      ...base,
      audit: [line('acquire', 2, 0), line('release', 2, 10), line('acquire', 2, 20)],
      acquired: [2, 2],
      minted: [4, 5, 4],
      cleared: [],
      landings: [],
    });
    const text = v.violations.join('\n');
    assert.match(text, /grants do not increase: #2 then #2/);
    assert.match(text, /grant #2 was reported acquired twice/);
    assert.match(text, /identifier 4 was minted twice/);
  });

  it('reports a clear without its audit line', () => {
    const v = checkContainerLog({ ...base, cleared: [2, 3] });
    assert.match(v.violations.join('\n'), /the clear of grant #3 has no audit line/);
  });

  it('reports landings without a grant, under a lapsed grant, or under a superseded one', () => {
    const v = checkContainerLog({
      ...base,
      pushes: [
        { sha: 'b', at: 700 },
        { sha: 'c', at: 2200 },
        { sha: 'd', at: 2300 },
      ],
      landings: [
        { at: 800, sha: 'b', grant: null },
        { at: 2250, sha: 'c', grant: 2 },
        { at: 2400, sha: 'd', grant: 1 },
      ],
    });
    const text = v.violations.join('\n');
    assert.match(text, /b landed without a grant/);
    assert.match(text, /c landed under grant #2, not live during its push/);
    assert.match(text, /d landed under grant #1 after grant #2 was issued/);
  });
});
