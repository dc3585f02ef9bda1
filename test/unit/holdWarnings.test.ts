import * as assert from 'node:assert/strict';
import { HOUR, MINUTE, ManualClock } from '../../src/core/clock';
import { holdWarningMessage, planHoldWarnings, type HoldFacts } from '../../src/core/holdWarnings';

const clock = new ManualClock();
const T = clock.now();
const hold = (over: Partial<HoldFacts> = {}): HoldFacts => ({
  grant: 7,
  grantedAt: T,
  expiresAt: T + 2 * HOUR,
  heartbeatFailing: false,
  ...over,
});

describe('holdWarnings: what the holder is warned of, and when', () => {
  it('warns of nothing while heartbeats work, and plans the cap warning 30 minutes before 24 h', () => {
    const plan = planHoldWarnings(hold(), new Set(), T + HOUR);
    assert.deepEqual(plan.due, []);
    assert.equal(plan.nextAt, T + 24 * HOUR - 30 * MINUTE);
  });

  it('warns 15 minutes before the lease ends while heartbeats fail, not earlier', () => {
    const failing = hold({ heartbeatFailing: true });
    const early = planHoldWarnings(failing, new Set(), T + 2 * HOUR - 16 * MINUTE);
    assert.deepEqual(early.due, []);
    assert.equal(early.nextAt, T + 2 * HOUR - 15 * MINUTE);
    const due = planHoldWarnings(failing, new Set(), T + 2 * HOUR - 15 * MINUTE).due;
    assert.deepEqual(due, [{ kind: 'lease-ending', grant: 7, endsAt: T + 2 * HOUR, key: 'lease-ending#7' }]);
  });

  it('warns once per grant and kind, and not after the end', () => {
    const failing = hold({ heartbeatFailing: true });
    const now = T + 2 * HOUR - 5 * MINUTE;
    assert.deepEqual(planHoldWarnings(failing, new Set(['lease-ending#7']), now).due, []);
    assert.equal(planHoldWarnings(failing, new Set(['lease-ending#6']), now).due.length, 1, "another grant's warning does not count");
    assert.deepEqual(planHoldWarnings(failing, new Set(), T + 2 * HOUR).due, []);
  });

  it('warns 30 minutes before the 24-hour cap even when heartbeats work', () => {
    const late = hold({ expiresAt: T + 24 * HOUR });
    const plan = planHoldWarnings(late, new Set(), T + 24 * HOUR - 30 * MINUTE);
    assert.deepEqual(
      plan.due.map(w => [w.kind, w.endsAt]),
      [['cap', T + 24 * HOUR]],
    );
  });

  it('a failing lease that would outlive the cap ends at the cap', () => {
    const plan = planHoldWarnings(hold({ expiresAt: T + 25 * HOUR, heartbeatFailing: true }), new Set(), T + 24 * HOUR - 10 * MINUTE);
    assert.deepEqual(
      plan.due.map(w => [w.kind, w.endsAt]),
      [
        ['lease-ending', T + 24 * HOUR],
        ['cap', T + 24 * HOUR],
      ],
    );
  });

  it('nothing to plan without a hold', () => {
    assert.deepEqual(planHoldWarnings(undefined, new Set(), T), { due: [], nextAt: undefined });
  });

  it('says what to do and when the lock ends', () => {
    const [cap] = planHoldWarnings(hold({ expiresAt: T + 24 * HOUR }), new Set(), T + 24 * HOUR - 30 * MINUTE).due;
    assert.equal(
      holdWarningMessage(cap!, T + 24 * HOUR - 30 * MINUTE, () => '14:05'),
      'Lockstep: grant #7 reaches the 24-hour cap soon — push and release, or your lock ends at 14:05 (in 30 min) and the next person takes over.',
    );
  });
});
