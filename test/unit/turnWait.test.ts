import * as assert from 'node:assert/strict';
import { ManualClock, systemClock, type Clock } from '../../src/core/clock';
import { ChangeWaiter } from '../../src/core/container/turnWait';
import type { Watch } from '../../src/core/stores/store';

/** A watch the test fires by hand; `lost` drops its announcements (an event that never arrives). */
function handWatch() {
  const state = { onChange: undefined as (() => void) | undefined, disposed: 0, lost: false };
  const open = async (onChange: () => void): Promise<Watch> => {
    state.onChange = onChange;
    return { dispose: () => state.disposed++ };
  };
  const fire = () => {
    if (!state.lost) state.onChange?.();
  };
  return { state, open, fire };
}

describe('ChangeWaiter: a wait that wakes on the driver’s announcement, with a poll behind it', () => {
  it('starts watching at the first sleep, which returns at once (the page is read again, now watched)', async () => {
    const clock = new ManualClock();
    const w = handWatch();
    const waiter = new ChangeWaiter(w.open, clock);
    assert.equal(w.state.onChange, undefined, 'nothing is watched before anyone waits');
    assert.equal(await waiter.sleep(1_000), 'changed');
    assert.ok(waiter.announced);
    assert.deepEqual(clock.sleeps, []);
    waiter.dispose();
    waiter.dispose();
    assert.equal(w.state.disposed, 1, 'the watch is disposed once');
  });

  it('an announcement while the waiter was reading is kept: the next sleep returns at once', async () => {
    const clock = new ManualClock();
    const w = handWatch();
    const waiter = new ChangeWaiter(w.open, clock);
    await waiter.sleep(1_000);
    w.fire();
    assert.equal(await waiter.sleep(1_000), 'changed');
    assert.deepEqual(clock.sleeps, [], 'no time passed');
    assert.equal(await waiter.sleep(1_000), 'elapsed', 'one announcement wakes one sleep');
    assert.deepEqual(clock.sleeps, [1_000]);
    waiter.dispose();
  });

  it('an announcement during a sleep ends it (a clock whose sleep ends only when aborted)', async () => {
    const parked: (() => void)[] = [];
    const clock: Clock = {
      ...systemClock,
      sleep: (_ms, signal) =>
        new Promise<void>(resolve => {
          if (signal?.aborted) return resolve();
          signal?.addEventListener('abort', () => resolve(), { once: true });
          parked.push(resolve);
        }),
    };
    const w = handWatch();
    const waiter = new ChangeWaiter(w.open, clock);
    await waiter.sleep(60_000);
    const sleeping = waiter.sleep(60_000);
    await Promise.resolve();
    assert.equal(parked.length, 1, 'asleep');
    w.fire();
    assert.equal(await sleeping, 'changed');
    waiter.dispose();
  });

  it('a lost announcement costs one poll interval: the sleep ends when its time is up', async () => {
    const clock = new ManualClock();
    const w = handWatch();
    w.state.lost = true;
    const waiter = new ChangeWaiter(w.open, clock);
    await waiter.sleep(1_000);
    w.fire();
    assert.equal(await waiter.sleep(1_000), 'elapsed');
    assert.deepEqual(clock.sleeps, [1_000]);
    waiter.dispose();
  });

  it('a driver that cannot watch (none, or a failure) leaves a waiter that polls', async () => {
    for (const open of [async () => undefined, async () => Promise.reject(new Error('no watch'))]) {
      const clock = new ManualClock();
      const waiter = new ChangeWaiter(open, clock);
      assert.equal(await waiter.sleep(1_000), 'changed');
      assert.equal(waiter.announced, false);
      assert.equal(await waiter.sleep(1_000), 'elapsed');
      assert.deepEqual(clock.sleeps, [1_000]);
      waiter.dispose();
    }
  });

  it('an aborted signal, or a disposed waiter, does not sleep', async () => {
    const clock = new ManualClock();
    const w = handWatch();
    const waiter = new ChangeWaiter(w.open, clock);
    await waiter.sleep(1_000);
    assert.equal(await waiter.sleep(1_000, AbortSignal.abort()), 'elapsed');
    waiter.dispose();
    assert.equal(await waiter.sleep(1_000), 'elapsed');
    assert.deepEqual(clock.sleeps, []);
  });
});
