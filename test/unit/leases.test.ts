import * as assert from 'node:assert/strict';
import { ManualClock, systemClock } from '../../src/core/clock';
import { LockBackendError, LockBusyError, LockOwnershipError } from '../../src/core/errors';
import { createLockManager, type LockManager } from '../../src/core/leases';
import { createMemoryDriver } from '../../src/core/stores/memory';
import type { Driver } from '../../src/core/stores/store';
import { wrapDriver } from '../helpers/drivers';

const HEX64 = /^[0-9a-f]{64}$/;

/** A ManualClock that calls `onSleep` after each sleep (to abort or move time mid-wait). */
class ScriptedClock extends ManualClock {
  onSleep: ((count: number) => void) | undefined;
  override async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    await super.sleep(ms, signal);
    this.onSleep?.(this.sleeps.length);
  }
}

/** Two managers on one store: two "processes" contending, with one injected clock. */
function setUp(driver: Driver = createMemoryDriver()) {
  const clock = new ScriptedClock();
  const a = createLockManager({ driverInstance: driver, clock, env: {} });
  const b = createLockManager({ driverInstance: driver, clock, env: {} });
  return { clock, a, b, driver };
}

const sum = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0);

describe('leases: the public result contract', () => {
  it('an acquired handle has a 64-hex owner token, the estimated expiry and a fencing token', async () => {
    const { clock, a } = setUp();
    const handle = await a.acquire('invoice:123', { ttl: 45 });
    assert.equal(handle.acquired, true);
    assert.match(handle.ownerToken(), HEX64);
    assert.equal(handle.ownerToken(), handle.ownerToken(), 'the accessor is stable');
    assert.deepEqual(handle.expiresAt(), new Date(clock.now() + 45_000));
    assert.ok(Number.isSafeInteger(handle.fencingToken) && handle.fencingToken! >= 1);
  });

  it('the default TTL is 30 seconds', async () => {
    const { clock, a } = setUp();
    const handle = await a.acquire('default-ttl');
    assert.deepEqual(handle.expiresAt(), new Date(clock.now() + 30_000));
  });

  it('every acquisition gets a fresh owner token', async () => {
    const { a, clock } = setUp();
    const tokens = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const h = await a.acquire(`name-${i % 3}`, { ttl: 1 });
      tokens.add(h.ownerToken());
      assert.equal(await h.release(), true);
      clock.advance(1);
    }
    assert.equal(tokens.size, 20);
  });

  it('a handle that did not acquire has no token, no expiry, no fencing token, and release() is false', async () => {
    const { a, b } = setUp();
    assert.ok((await a.acquire('busy-name')).acquired);
    const lost = await b.acquire('busy-name');
    assert.equal(lost.acquired, false);
    assert.throws(() => lost.ownerToken(), LockOwnershipError);
    assert.equal(lost.expiresAt(), undefined);
    assert.equal(lost.fencingToken, undefined);
    assert.equal(await lost.release(), false);
  });

  it('release() is true once, then false', async () => {
    const { a, b } = setUp();
    const handle = await a.acquire('once');
    assert.equal(await handle.release(), true);
    assert.equal(await handle.release(), false);
    assert.ok((await b.acquire('once')).acquired, 'the name is free again');
  });

  it('fencing tokens strictly increase per name across release, expiry and other names', async () => {
    const { a, b, clock } = setUp();
    const tokens: number[] = [];
    for (let i = 0; i < 5; i++) {
      const h = await (i % 2 ? a : b).acquire('fenced', { ttl: 10 });
      tokens.push(h.fencingToken!);
      await (await a.acquire('some-other-name', { ttl: 1 })).release();
      if (i % 2) await h.release();
      else clock.advance(10_000); // released, or left to expire
    }
    for (let i = 1; i < tokens.length; i++) assert.ok(tokens[i] > tokens[i - 1], `tokens ${tokens.join(',')}`);
  });

  it('does not expose the owner token through JSON or inspection of the handle', async () => {
    const { a } = setUp();
    const handle = await a.acquire('quiet');
    const token = handle.ownerToken();
    const { inspect } = await import('node:util');
    assert.ok(!JSON.stringify(handle).includes(token));
    assert.ok(!inspect(handle, { depth: 5, showHidden: true }).includes(token));
    assert.ok(!String(handle).includes(token));
  });
});

describe('leases: expiry (injected clock, no sleeps)', () => {
  it('a lease is held until its TTL ends, and free from that instant', async () => {
    const { a, b, clock } = setUp();
    const first = await a.acquire('expiring', { ttl: 30 });
    clock.advance(29_999);
    assert.equal((await b.acquire('expiring')).acquired, false);
    clock.advance(1);
    const second = await b.acquire('expiring');
    assert.equal(second.acquired, true);
    assert.ok(second.fencingToken! > first.fencingToken!);
  });

  it('release() after expiry is false (nobody else took it)', async () => {
    const { a, clock } = setUp();
    const handle = await a.acquire('late', { ttl: 5 });
    clock.advance(5_000);
    assert.equal(await handle.release(), false);
  });

  it('release() just before expiry is true', async () => {
    const { a, b, clock } = setUp();
    const handle = await a.acquire('just-in-time', { ttl: 5 });
    clock.advance(4_999);
    assert.equal(await handle.release(), true);
    assert.ok((await b.acquire('just-in-time')).acquired);
  });

  it('a wall-clock step forward expires leases (file and database expiry use the application clock)', async () => {
    const { a, b, clock } = setUp();
    await a.acquire('stepped', { ttl: 60 });
    clock.stepWall(61_000);
    assert.ok((await b.acquire('stepped')).acquired);
  });
});

describe('leases: owner mismatch', () => {
  it("a stale owner's release throws LockOwnershipError and leaves the new lease intact", async () => {
    const { a, b, clock } = setUp();
    const stale = await a.acquire('contended', { ttl: 10 });
    clock.advance(10_000);
    const fresh = await b.acquire('contended', { ttl: 10 });
    assert.ok(fresh.acquired);
    await assert.rejects(stale.release(), LockOwnershipError);
    // Intact: still held against a third owner, and its owner can release it.
    assert.equal((await a.acquire('contended')).acquired, false);
    assert.equal(await fresh.release(), true);
  });

  it("a stale owner's release after the new owner released is plain false", async () => {
    const { a, b, clock } = setUp();
    const stale = await a.acquire('gone', { ttl: 1 });
    clock.advance(1_000);
    const fresh = await b.acquire('gone', { ttl: 1 });
    assert.equal(await fresh.release(), true);
    assert.equal(await stale.release(), false);
  });

  it("one owner cannot release another owner's lease on a different name by accident", async () => {
    const { a, b } = setUp();
    const x = await a.acquire('x-name');
    const y = await b.acquire('y-name');
    assert.equal(await x.release(), true);
    assert.equal((await a.acquire('y-name')).acquired, false, 'y untouched');
    assert.equal(await y.release(), true);
  });
});

describe('leases: waiting', () => {
  it('wait 0 makes exactly one attempt and never sleeps', async () => {
    const { a, b, clock } = setUp();
    await a.acquire('w0', { ttl: 60 });
    assert.equal((await b.acquire('w0', { wait: 0 })).acquired, false);
    assert.deepEqual(clock.sleeps, []);
  });

  it("waits in sleeps of at most 25 ms and acquires once the holder's lease expires", async () => {
    const { a, b, clock } = setUp();
    const holder = await a.acquire('waited', { ttl: 10 });
    const start = clock.monotonic();
    const waiter = await b.acquire('waited', { wait: 60 });
    assert.equal(waiter.acquired, true);
    assert.ok(waiter.fencingToken! > holder.fencingToken!);
    assert.ok(clock.sleeps.length > 1);
    for (const ms of clock.sleeps) assert.ok(ms > 0 && ms <= 25, `slept ${ms} ms`);
    const waited = clock.monotonic() - start;
    assert.ok(waited >= 10_000 && waited <= 10_025, `acquired after ${waited} ms`);
    assert.equal(sum(clock.sleeps), waited);
  });

  it('acquires as soon as the holder releases during the wait', async () => {
    const { a, b, clock } = setUp();
    const holder = await a.acquire('handover', { ttl: 60 });
    let released: Promise<boolean> | undefined;
    clock.onSleep = n => {
      if (n === 40) released = holder.release();
    };
    const waiter = await b.acquire('handover', { wait: 60 });
    assert.equal(waiter.acquired, true);
    assert.equal(await released, true);
    assert.ok(clock.sleeps.length >= 40 && clock.sleeps.length <= 42, `${clock.sleeps.length} sleeps`);
  });

  it('gives up at the deadline: total sleep equals the wait exactly, each sleep at most 25 ms', async () => {
    const { a, b, clock } = setUp();
    await a.acquire('deadline', { ttl: 600 });
    const start = clock.monotonic();
    const waiter = await b.acquire('deadline', { wait: 2.5 });
    assert.equal(waiter.acquired, false);
    for (const ms of clock.sleeps) assert.ok(ms > 0 && ms <= 25, `slept ${ms} ms`);
    assert.ok(Math.abs(sum(clock.sleeps) - 2_500) < 1e-6, `slept ${sum(clock.sleeps)} ms in total`);
    assert.ok(Math.abs(clock.monotonic() - start - 2_500) < 1e-6);
  });

  it('the wait runs against a monotonic deadline: wall-clock steps backwards do not extend it', async () => {
    const { a, b, clock } = setUp();
    await a.acquire('monotonic', { ttl: 3600 });
    clock.onSleep = () => clock.stepWall(-1_000); // every sleep the wall clock jumps back a second
    const start = clock.monotonic();
    assert.equal((await b.acquire('monotonic', { wait: 1 })).acquired, false);
    assert.ok(clock.monotonic() - start <= 1_000 + 1e-6);
  });

  it('an AbortSignal ends the wait early, without extending it', async () => {
    const { a, b, clock } = setUp();
    await a.acquire('aborted', { ttl: 600 });
    const controller = new AbortController();
    clock.onSleep = n => {
      if (n === 10) controller.abort();
    };
    const start = clock.monotonic();
    const waiter = await b.acquire('aborted', { wait: 60, signal: controller.signal });
    assert.equal(waiter.acquired, false);
    assert.equal(clock.sleeps.length, 10);
    assert.ok(clock.monotonic() - start <= 10 * 25);
  });

  it('an already-aborted signal makes one attempt and does not wait', async () => {
    const { a, b, clock } = setUp();
    const signal = AbortSignal.abort();
    assert.equal((await a.acquire('pre-aborted', { wait: 60, signal })).acquired, true, 'a free lease is still taken');
    assert.equal((await b.acquire('pre-aborted', { wait: 60, signal })).acquired, false);
    assert.deepEqual(clock.sleeps, []);
  });

  it('with the system clock, an abort interrupts a real sleep at once', async () => {
    const driver = createMemoryDriver();
    const holder = createLockManager({ driverInstance: driver, env: {} });
    await holder.acquire('real-time', { ttl: 600 });
    const controller = new AbortController();
    let claims = 0;
    const counting = wrapDriver(driver, {
      claim: async (...args) => {
        if (++claims === 3) controller.abort();
        return driver.claim(...args);
      },
    });
    const waiterManager = createLockManager({ driverInstance: counting, env: {} });
    const started = performance.now();
    const waiter = await waiterManager.acquire('real-time', { wait: 60, signal: controller.signal });
    assert.equal(waiter.acquired, false);
    assert.equal(claims, 3);
    // Two sleeps of at most 25 ms each happened; a wait that ran on would take a minute.
    assert.ok(performance.now() - started < 10_000);
  });

  it('systemClock.sleep resolves early when its signal aborts', async () => {
    const controller = new AbortController();
    const started = performance.now();
    const sleeping = systemClock.sleep(60_000, controller.signal);
    controller.abort();
    await sleeping;
    assert.ok(performance.now() - started < 10_000);
    await systemClock.sleep(60_000, controller.signal); // already aborted: returns at once
  });
});

describe('leases: run()', () => {
  it("runs fn under the lease, passes the handle, returns fn's value and releases", async () => {
    const { a, b } = setUp();
    const value = await a.run('job', async handle => {
      assert.equal(handle.acquired, true);
      assert.equal((await b.acquire('job')).acquired, false, 'held while fn runs');
      return 42;
    });
    assert.equal(value, 42);
    assert.ok((await b.acquire('job')).acquired, 'released afterwards');
  });

  it('throws LockBusyError when contention persists for the whole wait, and never calls fn', async () => {
    const { a, b, clock } = setUp();
    await a.acquire('busy-job', { ttl: 600 });
    let called = false;
    const error = await b
      .run(
        'busy-job',
        () => {
          called = true;
        },
        { wait: 1 },
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(error instanceof LockBusyError, String(error));
    assert.equal(error.waitedSeconds, 1);
    assert.equal(error.retryable, true);
    assert.equal(called, false);
    assert.ok(sum(clock.sleeps) <= 1_000 + 1e-6);
  });

  it('releases and rethrows when fn fails', async () => {
    const { a, b } = setUp();
    const boom = new Error('fn failed');
    await assert.rejects(
      a.run('failing-job', () => {
        throw boom;
      }),
      e => e === boom,
    );
    assert.ok((await b.acquire('failing-job')).acquired, 'released after the failure');
  });

  it("keeps fn's error primary over a LockOwnershipError from the release", async () => {
    const { a, b, clock } = setUp();
    const boom = new Error('slow fn failed');
    await assert.rejects(
      a.run(
        'overrun',
        async () => {
          clock.advance(5_000); // fn overran its TTL and someone else took the lease
          assert.ok((await b.acquire('overrun')).acquired);
          throw boom;
        },
        { ttl: 5 },
      ),
      e => e === boom,
    );
  });

  it('propagates a LockOwnershipError after a successful fn that overran its lease', async () => {
    const { a, b, clock } = setUp();
    await assert.rejects(
      a.run(
        'overrun-ok',
        async () => {
          clock.advance(5_000);
          assert.ok((await b.acquire('overrun-ok')).acquired);
        },
        { ttl: 5 },
      ),
      LockOwnershipError,
    );
  });

  describe('with a driver whose release fails', () => {
    const releaseFailure = new LockBackendError('memory', 'injected release failure');
    function failingRelease() {
      const inner = createMemoryDriver();
      const driver = wrapDriver(inner, {
        release: async () => {
          throw releaseFailure;
        },
      });
      return { inner, ...setUp(driver) };
    }

    it("keeps fn's error primary, and the lease stays until its TTL", async () => {
      const { a, b, clock } = failingRelease();
      const boom = new Error('fn failed first');
      await assert.rejects(
        a.run(
          'double-failure',
          () => {
            throw boom;
          },
          { ttl: 20 },
        ),
        e => e === boom,
      );
      assert.equal((await b.acquire('double-failure')).acquired, false, 'not released');
      clock.advance(20_000);
      assert.ok((await b.acquire('double-failure')).acquired, 'free after the TTL');
    });

    it('propagates the release failure after a successful fn', async () => {
      const { a } = failingRelease();
      let ran = false;
      await assert.rejects(
        a.run('release-fails', () => {
          ran = true;
          return 'done';
        }),
        e => e === releaseFailure,
      );
      assert.equal(ran, true);
    });
  });
});

describe('leases: manager lifecycle', () => {
  let manager: LockManager;
  afterEach(async () => {
    await manager?.close();
  });

  it('refuses work after close(), and close() is safe twice', async () => {
    manager = createLockManager({ driver: 'memory', env: {} });
    assert.ok((await manager.acquire('before-close')).acquired);
    await manager.close();
    await manager.close();
    await assert.rejects(manager.acquire('after-close'), { name: 'LockConfigurationError' });
  });

  it('with driver memory and an injected clock, uses that clock', async () => {
    const clock = new ManualClock(Date.UTC(2030, 5, 1));
    manager = createLockManager({ driver: 'memory', clock, env: {} });
    const handle = await manager.acquire('clocked', { ttl: 2 });
    assert.deepEqual(handle.expiresAt(), new Date(Date.UTC(2030, 5, 1) + 2_000));
    assert.equal(await manager.driverName(), 'memory');
  });
});
