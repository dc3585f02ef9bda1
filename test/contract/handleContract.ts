/**
 * The lease handle's contract on a real driver (docs/leases.md#handles): `extend` keeps a live lease
 * past its first TTL with the same fencing token, and once the lease has passed its expiry `extend`
 * refuses, `signal` has aborted, and the next owner takes the name.
 * A driver test file calls `describeHandleContract('file', async () => createFileDriver(...))`;
 * `open` returns a driver on a shared, persistent backend, closed after each test.
 *
 * Time: drivers that only know the time the manager gives them (memory) get a `manualHandleTime()`, so
 * expiry costs no real time; the others keep `realHandleTime`, where time passes for real and the suite
 * waits for it with a deadline.
 */
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ManualClock, systemClock, type Clock } from '../../src/core/clock';
import { createLockManager } from '../../src/core/leases';
import type { Driver } from '../../src/core/stores/store';
import { waitFor } from '../helpers/waitFor';

/** The clock the managers use, and how the suite lets time pass beyond an instant. */
export interface HandleTime {
  readonly clock: Clock;
  passBeyond(t: number): Promise<void>;
}

/** Real time: passing it means waiting for it, with a deadline. */
export const realHandleTime: HandleTime = {
  clock: systemClock,
  passBeyond: async t => {
    await waitFor(() => Date.now() > t, { timeoutMs: 10_000, description: 'the clock to pass the instant' });
  },
};

/** A manual clock: time moves (and the handles' expiry timers fire) only when the suite says so. */
export function manualHandleTime(): HandleTime {
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  return {
    clock,
    passBeyond: async t => {
      clock.advance(Math.max(0, t + 1 - clock.now()));
    },
  };
}

export function describeHandleContract(label: string, open: () => Promise<Driver>, time: HandleTime = realHandleTime): void {
  describe(`handle contract: ${label}`, function () {
    this.timeout(30_000);
    let driver: Driver;
    beforeEach(async () => {
      driver = await open();
    });
    afterEach(async () => {
      await driver.close();
    });
    const managers = () => [0, 1].map(() => createLockManager({ driverInstance: driver, env: {}, clock: time.clock }));
    const name = () => `contract:${randomBytes(8).toString('hex')}`;

    it('extend keeps a live lease past its first TTL, with the same fencing token', async () => {
      const [a, b] = managers();
      const key = name();
      const handle = await a.acquire(key, { ttl: 1 });
      const firstExpiry = handle.expiresAt()!.getTime();
      assert.equal(await handle.extend(30), true);
      await time.passBeyond(firstExpiry + 200);
      assert.equal(handle.signal.aborted, false);
      assert.equal((await b.acquire(key)).acquired, false, 'still held after the first TTL');
      const token = handle.fencingToken;
      assert.equal(await handle.extend(30), true);
      assert.equal(handle.fencingToken, token);
      assert.equal(await handle.release(), true);
    });

    it('after expiry: the signal has aborted, extend refuses, the next owner takes the name and extend never revives it', async () => {
      const [a, b] = managers();
      const key = name();
      const handle = await a.acquire(key, { ttl: 1 });
      await time.passBeyond(handle.expiresAt()!.getTime());
      await waitFor(() => handle.signal.aborted, { description: 'the signal to abort at expiry' });
      assert.equal(await handle.extend(30), false);
      const next = await b.acquire(key, { wait: 5 });
      assert.ok(next.acquired);
      assert.ok(next.fencingToken! > handle.fencingToken!);
      assert.equal(await handle.extend(30), false);
      assert.equal(await next.release(), true);
    });
  });
}
