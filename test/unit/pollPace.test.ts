import * as assert from 'node:assert/strict';
import { combinedMode, fixedPace, freshnessOf, GIT_POLL_PACE, IDLE_INTEREST, pollDelay, pollMode } from '../../src/core/stores/pollPace';

const NOW = Date.UTC(2026, 0, 1, 9);

describe('poll pace (state → interval)', () => {
  it('is slow while nobody in the window holds, waits or asked', () => {
    assert.equal(pollMode(IDLE_INTEREST, NOW, GIT_POLL_PACE), 'slow');
  });

  it('is fast while the window holds the lock or waits for it (queued, queue head, your turn)', () => {
    assert.equal(pollMode({ holds: true, waits: false }, NOW, GIT_POLL_PACE), 'fast');
    assert.equal(pollMode({ holds: false, waits: true }, NOW, GIT_POLL_PACE), 'fast');
  });

  it('is fast for a short while after the user asked, then slow again', () => {
    const asked = { holds: false, waits: false, askedAt: NOW };
    assert.equal(pollMode(asked, NOW, GIT_POLL_PACE), 'fast');
    assert.equal(pollMode(asked, NOW + GIT_POLL_PACE.askedForMs - 1, GIT_POLL_PACE), 'fast');
    assert.equal(pollMode(asked, NOW + GIT_POLL_PACE.askedForMs, GIT_POLL_PACE), 'slow');
    // A request stamped in the future (a clock step) does not keep the pace fast.
    assert.equal(pollMode({ ...asked, askedAt: NOW + 3_600_000 }, NOW, GIT_POLL_PACE), 'slow');
  });

  it('takes the fastest mode any watcher of the process asks for', () => {
    assert.equal(combinedMode([IDLE_INTEREST, IDLE_INTEREST], NOW, GIT_POLL_PACE), 'slow');
    assert.equal(combinedMode([IDLE_INTEREST, { holds: false, waits: true }], NOW, GIT_POLL_PACE), 'fast');
    assert.equal(combinedMode([], NOW, GIT_POLL_PACE), 'slow');
  });

  it('draws the slow delay in 30–36 s (never under 30 s: at most 120 polls an hour) and the fast one in 1.6–2 s', () => {
    for (const r of [0, 0.25, 0.5, 0.999999]) {
      const slow = pollDelay('slow', 0, GIT_POLL_PACE, r);
      const fast = pollDelay('fast', 0, GIT_POLL_PACE, r);
      assert.ok(slow >= 30_000 && slow <= 36_000, String(slow));
      assert.ok(fast >= 1_600 && fast <= 2_000, String(fast));
    }
    // Jitter: different draws give different delays, so fifty windows drift apart.
    assert.notEqual(pollDelay('slow', 0, GIT_POLL_PACE, 0.1), pollDelay('slow', 0, GIT_POLL_PACE, 0.7));
  });

  it('backs off after failures, doubling up to the cap', () => {
    const d = (failures: number) => pollDelay('fast', failures, GIT_POLL_PACE, 1);
    assert.deepEqual([d(0), d(1), d(2), d(3)], [2_000, 4_000, 8_000, 16_000]);
    assert.equal(d(30), GIT_POLL_PACE.maxBackoffMs);
    assert.equal(pollDelay('slow', 50, GIT_POLL_PACE, 0), GIT_POLL_PACE.maxBackoffMs);
  });

  it('states its freshness bounds from the pace (the tooltip line)', () => {
    assert.deepEqual(freshnessOf(GIT_POLL_PACE), { idleMs: 36_000, activeMs: 2_000 });
    assert.deepEqual(freshnessOf(fixedPace(50)), { idleMs: 50, activeMs: 50 });
  });
});
