import * as assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock';
import { LockBackendError, LockLeaseLostError } from '../../src/core/errors';
import { HeartbeatLoop, type HeartbeatFailed, type HeartbeatLoss } from '../../src/core/heartbeatLoop';

/** Lets promise chains started by a fired timer run to completion (no time passes). */
const settle = () => new Promise<void>(resolve => setImmediate(resolve));

const TTL = 60_000;
const INTERVAL = 20_000;

/**
 * A store the test controls: `up` renews to now + TTL, `down` fails like an unreachable backend,
 * `gone` answers that the lease is lost, `hang` leaves the call pending until `finish()`.
 */
function setUp(options: { ttl?: number; interval?: number } = {}) {
  const clock = new ManualClock();
  const ttl = options.ttl ?? TTL;
  const store = { mode: 'up' as 'up' | 'down' | 'gone' | 'hang', calls: 0, finish: undefined as (() => void) | undefined };
  const loop = new HeartbeatLoop({
    clock,
    intervalMs: options.interval ?? INTERVAL,
    expiresAt: clock.now() + ttl,
    renew: async () => {
      store.calls += 1;
      if (store.mode === 'down') throw new LockBackendError('memory', 'The lock store is unreachable.');
      if (store.mode === 'gone') throw new LockLeaseLostError('The lease was superseded.', 1);
      if (store.mode === 'hang')
        await new Promise<void>(resolve => {
          store.finish = resolve;
        });
      return { expiresAt: clock.now() + ttl };
    },
  });
  const renewed: number[] = [];
  const failed: HeartbeatFailed[] = [];
  const lost: HeartbeatLoss[] = [];
  loop.onDidRenew(e => renewed.push(e.expiresAt));
  loop.onDidFail(e => failed.push(e));
  loop.onDidLose(e => lost.push(e));
  /** Moves time in steps of `step`, letting each fired renewal settle. */
  const run = async (ms: number, step = 500) => {
    for (let t = 0; t < ms; t += step) {
      clock.advance(Math.min(step, ms - t));
      await settle();
    }
  };
  return { clock, store, loop, renewed, failed, lost, run };
}

describe('core heartbeat loop', () => {
  it('renews every interval and reports each new expiry', async () => {
    const { clock, store, loop, renewed, run } = setUp();
    loop.start();
    await run(INTERVAL - 500);
    assert.equal(store.calls, 0);
    await run(500);
    assert.equal(store.calls, 1);
    assert.deepEqual(renewed, [clock.now() + TTL]);
    await run(2 * INTERVAL);
    assert.equal(store.calls, 3);
    assert.equal(loop.expiresAt, clock.now() + TTL);
    loop.dispose();
  });

  it('renews at half the time left when the lease is shorter than two intervals', async () => {
    const { store, loop, run } = setUp({ ttl: 10_000, interval: 60_000 });
    loop.start();
    await run(4_500);
    assert.equal(store.calls, 0);
    await run(500);
    assert.equal(store.calls, 1, 'the first renewal at 5 s of a 10 s lease');
    loop.dispose();
  });

  it('runs one renewal at a time: a slow store is not asked again until it answers', async () => {
    const { store, loop, renewed, run } = setUp({ ttl: 600_000 });
    store.mode = 'hang';
    loop.start();
    await run(5 * INTERVAL);
    assert.equal(store.calls, 1);
    loop.renewNow();
    await run(1_000);
    assert.equal(store.calls, 1, 'renewNow does not overlap a renewal in flight');
    store.mode = 'up';
    store.finish!();
    await settle();
    assert.equal(renewed.length, 1);
    await run(INTERVAL);
    assert.equal(store.calls, 2);
    loop.dispose();
  });

  it('backs off after failures (1 s, 2 s, 4 s … capped at the interval) and resets after a success', async () => {
    const { store, loop, failed, renewed, run } = setUp({ ttl: 600_000, interval: 5_000 });
    store.mode = 'down';
    loop.start();
    await run(5_000 + 1_000 + 2_000 + 4_000 + 5_000, 250);
    assert.deepEqual(
      failed.map(f => f.retryInMs),
      [1_000, 2_000, 4_000, 5_000, 5_000],
    );
    assert.deepEqual(
      failed.map(f => f.failures),
      [1, 2, 3, 4, 5],
    );
    store.mode = 'up';
    await run(5_000, 250);
    assert.equal(renewed.length, 1);
    store.mode = 'down';
    await run(5_000, 250);
    assert.equal(failed.at(-1)!.failures, 1, 'the count starts again after a success');
    loop.dispose();
  });

  it('declares the lease lost once the clock passes the last confirmed expiry while the store is unreachable, and never revives it', async () => {
    const { clock, store, loop, lost, renewed, run } = setUp();
    loop.start();
    await run(INTERVAL);
    const confirmed = loop.expiresAt;
    store.mode = 'down';
    await run(confirmed - clock.now() - 500);
    assert.equal(loop.state, 'running', 'still ours until the expiry passes');
    assert.equal(lost.length, 0);
    await run(500);
    assert.equal(loop.state, 'lost');
    assert.equal(lost.length, 1);
    assert.equal(lost[0].reason, 'expired');
    assert.ok(lost[0].reason === 'expired' && lost[0].lastError instanceof LockBackendError);
    assert.ok(lost[0].error instanceof LockLeaseLostError);
    assert.match(lost[0].error.message, /unreachable/);
    assert.equal(lost[0].expiresAt, confirmed);
    assert.equal(clock.pendingTimers, 0, 'nothing left scheduled');
    // The store comes back: nothing tries to renew the lost lease.
    const calls = store.calls;
    store.mode = 'up';
    loop.renewNow();
    await run(10 * INTERVAL, 5_000);
    assert.equal(store.calls, calls);
    assert.equal(renewed.length, 1);
    assert.equal(lost.length, 1);
  });

  it('a renewal still in flight when the expiry passes does not revive the lease when it succeeds', async () => {
    const { clock, store, loop, lost, renewed, run } = setUp({ ttl: 30_000, interval: 10_000 });
    store.mode = 'hang';
    loop.start();
    await run(30_000);
    assert.equal(loop.state, 'lost');
    store.finish!();
    await settle();
    assert.equal(loop.state, 'lost');
    assert.deepEqual(renewed, []);
    assert.equal(lost.length, 1);
    assert.equal(clock.pendingTimers, 0);
  });

  it('stops at once when the store says the lease is gone (superseded), with that error', async () => {
    const { store, loop, lost, run } = setUp();
    store.mode = 'gone';
    loop.start();
    await run(INTERVAL);
    assert.equal(loop.state, 'lost');
    assert.equal(lost[0].reason, 'superseded');
    assert.match(lost[0].error.message, /superseded/);
    await run(3 * INTERVAL);
    assert.equal(store.calls, 1);
  });

  it('stop() is passive: no renewal, no event, no timer left; safe twice', async () => {
    const { clock, store, loop, lost, run } = setUp();
    loop.start();
    loop.stop();
    loop.stop();
    assert.equal(loop.state, 'stopped');
    assert.equal(clock.pendingTimers, 0);
    await run(3 * TTL, 10_000);
    assert.equal(store.calls, 0);
    assert.equal(lost.length, 0);
  });

  it('a lease already past its expiry at start is lost at once, without asking the store', async () => {
    const { clock, store, loop, lost } = setUp();
    clock.advance(TTL);
    loop.start();
    assert.equal(loop.state, 'lost');
    assert.equal(lost[0].reason, 'expired');
    assert.equal(store.calls, 0);
  });
});
