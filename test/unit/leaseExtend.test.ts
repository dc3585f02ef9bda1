import * as assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock';
import { LockConfigurationError, LockLeaseLostError, LockOwnershipError } from '../../src/core/errors';
import { createLockManager } from '../../src/core/leases';
import { createMemoryDriver } from '../../src/core/stores/memory';
import type { Driver } from '../../src/core/stores/store';
import { recordingDriver, wrapDriver } from '../helpers/drivers';

/** Two managers on one store with one injected clock (docs/leases.md#handles). */
function setUp(driver: Driver = createMemoryDriver()) {
  const clock = new ManualClock();
  const a = createLockManager({ driverInstance: driver, clock, env: {} });
  const b = createLockManager({ driverInstance: driver, clock, env: {} });
  return { clock, a, b };
}

describe('leases: handle.extend(ttl)', () => {
  it('moves the expiry to now + ttl, keeps the fencing token, and keeps others out past the old expiry', async () => {
    const { clock, a, b } = setUp();
    const handle = await a.acquire('extend:me', { ttl: 10 });
    const token = handle.fencingToken;
    clock.advance(8_000);
    assert.equal(await handle.extend(10), true);
    assert.deepEqual(handle.expiresAt(), new Date(clock.now() + 10_000));
    assert.equal(handle.fencingToken, token, 'the fencing token stays the same');
    clock.advance(5_000); // past the original expiry (10 s), within the extended one (18 s)
    assert.equal((await b.acquire('extend:me')).acquired, false);
    assert.equal(handle.signal.aborted, false);
    assert.equal(await handle.release(), true);
  });

  it('refuses after the local expiry without asking the store, aborts the signal, and never revives the lease', async () => {
    const { driver, calls } = recordingDriver(createMemoryDriver());
    const { clock, a, b } = setUp(driver);
    const handle = await a.acquire('extend:late', { ttl: 5 });
    clock.advance(5_000);
    const before = calls.length;
    assert.equal(await handle.extend(30), false);
    assert.equal(calls.slice(before).filter(c => c.method === 'extend').length, 0, 'no store call for a lease known to be gone');
    assert.ok(handle.signal.reason instanceof LockLeaseLostError);
    const next = await b.acquire('extend:late');
    assert.ok(next.acquired, 'the name is free for the next owner');
    assert.ok(next.fencingToken! > handle.fencingToken!);
    assert.equal(await handle.extend(30), false, 'still refused once someone else holds it');
  });

  it('refuses when the store no longer has this lease, aborts the signal, and then stays refused', async () => {
    let gone = false;
    const inner = createMemoryDriver();
    const { a } = setUp(wrapDriver(inner, { extend: (...args) => (gone ? Promise.resolve(false) : inner.extend(...args)) }));
    const handle = await a.acquire('extend:gone', { ttl: 30 });
    assert.equal(await handle.extend(30), true);
    gone = true;
    assert.equal(await handle.extend(30), false);
    assert.ok(handle.signal.aborted);
    gone = false;
    assert.equal(await handle.extend(30), false, 'a lost lease is never revived, even if the store would allow it');
  });

  it('refuses after release and for a handle that did not acquire; rejects a TTL out of bounds', async () => {
    const { a, b } = setUp();
    const handle = await a.acquire('extend:released', { ttl: 30 });
    const busy = await b.acquire('extend:released');
    await assert.rejects(handle.extend(0), LockConfigurationError);
    await assert.rejects(handle.extend(86_401), LockConfigurationError);
    assert.equal(await busy.extend(30), false);
    assert.equal(await handle.release(), true);
    assert.equal(await handle.extend(30), false);
  });
});

describe('leases: handle.signal', () => {
  it('aborts exactly when the local expiry passes, with a LockLeaseLostError that names nothing', async () => {
    const { clock, a } = setUp();
    const handle = await a.acquire('signal:expiry', { ttl: 10 });
    let aborts = 0;
    handle.signal.addEventListener('abort', () => aborts++);
    clock.advance(9_999);
    assert.equal(handle.signal.aborted, false);
    clock.advance(1);
    assert.equal(handle.signal.aborted, true);
    assert.ok(handle.signal.reason instanceof LockLeaseLostError);
    assert.ok(!String(handle.signal.reason.message).includes('signal:expiry'));
    clock.advance(60_000);
    assert.equal(aborts, 1);
  });

  it('follows an extension: not at the old expiry, at the new one', async () => {
    const { clock, a } = setUp();
    const handle = await a.acquire('signal:extended', { ttl: 10 });
    clock.advance(5_000);
    assert.ok(await handle.extend(20));
    clock.advance(10_000); // old expiry passed
    assert.equal(handle.signal.aborted, false);
    clock.advance(10_000); // new expiry
    assert.equal(handle.signal.aborted, true);
  });

  it('aborts on release and leaves no timer behind', async () => {
    const { clock, a } = setUp();
    const handle = await a.acquire('signal:release', { ttl: 10 });
    assert.equal(handle.signal.aborted, false);
    assert.equal(clock.pendingTimers, 1, 'reading the signal arms the expiry timer');
    assert.equal(await handle.release(), true);
    assert.equal(handle.signal.aborted, true);
    assert.equal(clock.pendingTimers, 0);
  });

  it('costs no timer while nobody reads it, and read after the expiry is already aborted', async () => {
    const { clock, a } = setUp();
    const handle = await a.acquire('signal:unread', { ttl: 10 });
    assert.equal(clock.pendingTimers, 0);
    clock.advance(10_000);
    assert.equal(handle.signal.aborted, true);
    assert.ok(handle.signal.reason instanceof LockLeaseLostError);
    assert.equal(clock.pendingTimers, 0);
    assert.equal(await handle.extend(10), false, 'an expired lease is not revived');
  });

  it('aborts when release finds the lease taken by another owner', async () => {
    const { clock, a, b } = setUp();
    const stale = await a.acquire('signal:stolen', { ttl: 5 });
    const signal = stale.signal;
    clock.advance(5_000);
    assert.ok((await b.acquire('signal:stolen')).acquired);
    await assert.rejects(stale.release(), LockOwnershipError);
    assert.equal(signal.aborted, true);
  });

  it('is already aborted for a handle that did not acquire', async () => {
    const { a, b } = setUp();
    await a.acquire('signal:busy');
    const busy = await b.acquire('signal:busy');
    assert.equal(busy.signal.aborted, true);
    assert.ok(busy.signal.reason instanceof LockLeaseLostError);
  });

  it('run() hands fn the handle and its signal, which aborts if fn outlives the lease', async () => {
    const { clock, a } = setUp();
    let seen: AbortSignal | undefined;
    await a.run(
      'signal:run',
      async (handle, signal) => {
        seen = signal;
        assert.equal(signal, handle.signal);
        assert.equal(signal.aborted, false);
        clock.advance(5_000);
        assert.equal(signal.aborted, true, 'the lease ran out under fn');
      },
      { ttl: 5 },
    );
    assert.ok(seen?.aborted);
  });
});
