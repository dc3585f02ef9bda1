import * as assert from 'node:assert/strict';
import { HOUR, ManualClock, MINUTE, SECOND } from '../../src/core/clock';
import { GIT_POLL_PACE, IDLE_INTEREST, type WatchInterest } from '../../src/core/stores/pollPace';
import { RemotePoller } from '../../src/core/stores/git/remotePoller';
import { runUntil, seededRandom } from '../helpers/simulatedPolls';

const REF = 'refs/lockstep/test/records/0000';

/**
 * A simulated hour of one window's git watch (a ManualClock, a fake remote answering at once):
 * counts the remote requests (`git ls-remote` calls) per mode, and checks that a change on the
 * remote is seen within the pace's stated bound in each.
 */
function setUp(interest: () => WatchInterest, seed = 7) {
  const clock = new ManualClock();
  const remote = { sha: 'a'.repeat(40), requests: 0, down: false };
  const poller = new RemotePoller(
    async refs => {
      remote.requests++;
      if (remote.down) throw new Error('unreachable');
      return new Map(refs.map(ref => [ref, remote.sha]));
    },
    GIT_POLL_PACE,
    clock,
    seededRandom(seed),
  );
  const seen: number[] = [];
  const watch = poller.watch(REF, () => seen.push(clock.monotonic()), remote.sha, interest);
  return { clock, remote, poller, watch, seen };
}

/** Moves the remote ref at `at`, runs until `at + bound`, and says when the watcher heard of it. */
async function changeAndRun(w: ReturnType<typeof setUp>, at: number, bound: number, sha: string): Promise<number | undefined> {
  await runUntil(w.clock, at);
  w.remote.sha = sha;
  const before = w.seen.length;
  await runUntil(w.clock, at + bound);
  return w.seen.slice(before)[0];
}

describe('git watch: idle cost over a simulated hour', () => {
  it('an idle window polls at most 120 times an hour, and sees each change within 36 s', async () => {
    const w = setUp(() => IDLE_INTEREST);
    const bound = GIT_POLL_PACE.slow.maxMs;
    for (const [i, at] of [7 * MINUTE + 1, 23 * MINUTE + 500, 41 * MINUTE + 17 * SECOND].entries()) {
      const heard = await changeAndRun(w, at, bound, String(i).repeat(40));
      assert.ok(heard !== undefined && heard - at <= bound, `change at ${at} heard at ${heard}`);
    }
    await runUntil(w.clock, HOUR - 1);
    assert.ok(w.remote.requests <= 120, `${w.remote.requests} requests in the idle hour`);
    assert.ok(w.remote.requests >= 100, `${w.remote.requests}: the slow poll still runs`);
    w.watch.dispose();
    assert.equal(w.clock.pendingTimers, 0);
  });

  it('a queued (or holding) window polls fast, ≤ 2 s apart, and sees a change within 2 s', async () => {
    const w = setUp(() => ({ holds: false, waits: true }));
    const bound = GIT_POLL_PACE.fast.maxMs;
    const heard = await changeAndRun(w, 20 * MINUTE + 3, bound, 'b'.repeat(40));
    assert.ok(heard !== undefined && heard - (20 * MINUTE + 3) <= bound, `heard at ${heard}`);
    await runUntil(w.clock, HOUR - 1);
    assert.ok(w.remote.requests >= HOUR / GIT_POLL_PACE.fast.maxMs, `${w.remote.requests} requests in the queued hour`);
    assert.ok(w.remote.requests <= HOUR / GIT_POLL_PACE.fast.minMs + 1, `${w.remote.requests} requests in the queued hour`);
    w.watch.dispose();
  });

  it('turns fast as soon as the window joins the queue (a pending slow poll is brought forward), and slow after', async () => {
    let interest: WatchInterest = IDLE_INTEREST;
    const w = setUp(() => interest);
    await runUntil(w.clock, 10 * MINUTE);
    interest = { holds: false, waits: true };
    w.watch.nudge?.();
    const heard = await changeAndRun(w, 10 * MINUTE, GIT_POLL_PACE.fast.maxMs, 'c'.repeat(40));
    assert.ok(heard !== undefined, 'seen within 2 s of joining the queue');
    interest = IDLE_INTEREST;
    const before = w.remote.requests;
    await runUntil(w.clock, 40 * MINUTE);
    assert.ok(w.remote.requests - before <= 61, `${w.remote.requests - before} requests in 30 idle minutes`);
  });

  it('polls fast for a minute after the user asked (Refresh, an action), then slow', async () => {
    const start = Date.UTC(2026, 0, 1);
    const w = setUp(() => ({ holds: false, waits: false, askedAt: start }));
    await runUntil(w.clock, GIT_POLL_PACE.askedForMs);
    assert.ok(w.remote.requests >= 30, `${w.remote.requests} polls in the minute after asking`);
    const before = w.remote.requests;
    await runUntil(w.clock, GIT_POLL_PACE.askedForMs + 10 * MINUTE);
    assert.ok(w.remote.requests - before <= 21, `${w.remote.requests - before} polls in the next ten minutes`);
  });

  it('backs off while the remote is away, tells the watcher once, and misses no change made meanwhile', async () => {
    const w = setUp(() => ({ holds: false, waits: true }));
    await runUntil(w.clock, MINUTE);
    w.remote.down = true;
    const before = { requests: w.remote.requests, seen: w.seen.length };
    await runUntil(w.clock, 31 * MINUTE);
    // Fast pace would be ~900 polls in 30 minutes; backed off to every 5 min it is about a dozen.
    assert.ok(w.remote.requests - before.requests <= 16, `${w.remote.requests - before.requests} polls while down`);
    assert.equal(w.seen.length - before.seen, 1, 'the watcher is told once that it should look (its read meets the outage)');
    // The ref moved while the remote could not be asked: the first good poll reports it.
    w.remote.sha = 'd'.repeat(40);
    w.remote.down = false;
    await runUntil(w.clock, 31 * MINUTE + GIT_POLL_PACE.maxBackoffMs);
    assert.equal(w.seen.length - before.seen, 2, 'the change is seen once the remote answers');
    // A good read by this process (observe) ends the back-off at once.
    w.remote.down = true;
    await runUntil(w.clock, 45 * MINUTE);
    w.poller.observe(REF, 'd'.repeat(40), false);
    w.remote.down = false;
    const polls = w.remote.requests;
    await runUntil(w.clock, 45 * MINUTE + 10 * SECOND);
    assert.ok(w.remote.requests - polls >= 4, 'fast again after the remote answered a read');
  });

  it('fifty idle windows do not poll in step (jitter)', async () => {
    const windows = Array.from({ length: 50 }, (_, i) => setUp(() => IDLE_INTEREST, i + 1));
    // All open at the same instant; after the immediate first poll each window's next poll falls at its own instant.
    await Promise.all(windows.map(w => runUntil(w.clock, 1)));
    const due = new Set(windows.map(w => w.clock.nextTimerIn));
    assert.ok(due.size >= 45, `${due.size} distinct poll instants among 50 windows`);
    for (const w of windows) w.watch.dispose();
  });
});
