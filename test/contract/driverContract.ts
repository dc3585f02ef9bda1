/**
 * THE contract every Lockstep driver must meet, as one reusable mocha suite (node-redlock style:
 * the same tests run against every backend). A driver test file calls
 *
 *   describeDriverContract('redis', async () => createRedisDriver(...));
 *
 * `open` is called before each test and must return a driver on a shared, persistent backend (the
 * suite closes it after the test). Keys are fresh random 64-hex digests, so tests never see each
 * other's data and need no clean-up beyond what the backend does with expired leases.
 *
 * Time: every call passes `clock.now()`. Drivers that compare against the `now` they are given and
 * live in this process (memory) get a `manualClock()`, so expiry costs no real time; drivers whose
 * store is shared with other processes or owns the TTL (file, SQL, Redis, git) keep the default
 * `realClock`, where expiry is observed by polling with a deadline. Short TTLs keep that quick.
 */
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Driver } from '../../src/core/stores/store';
import { behaviourGroup } from '../helpers/behaviours';
import { crowdedPage } from '../helpers/crowdedPage';
import { scaled } from '../helpers/calibration';
import { waitFor } from '../helpers/waitFor';

/** Long enough not to expire under a slow CI machine, for tests about live leases. */
const LIVE_TTL_MS = 30_000;
/** Short, for tests that wait for expiry. */
const SHORT_TTL_MS = 300;
/**
 * The first lease of "keeps an extended lease alive past its first expiry": the extend must land before it lapses,
 * which on the real clock is one driver call (several git processes on the git driver). 1 s on an unloaded machine,
 * scaled by the run's slowdown factor (test/helpers/calibration.ts): at 300 ms the git driver's extend came too late
 * on a busy machine and the test failed with the driver right.
 */
const firstTtlMs = (clock: ContractClock) => (clock.manual ? SHORT_TTL_MS : scaled(1_000));

/** A fresh key: what `keyDigest` produces (64 hex characters). */
export function randomKey(): string {
  return randomBytes(32).toString('hex');
}

/** A fresh owner hash: what `hashToken` produces (64 hex characters). */
export function randomOwner(): string {
  return randomBytes(32).toString('hex');
}

/** The time the contract passes to the driver, and how it lets time pass. */
export interface ContractClock {
  /** True when the clock only moves when told to (then the suite can also check "not a moment before"). */
  readonly manual: boolean;
  now(): number;
  /** Resolves once `now()` is past `t`. */
  passBeyond(t: number): Promise<void>;
}

/** The wall clock: passing time means waiting for it, with a deadline. */
export const realClock: ContractClock = {
  manual: false,
  now: () => Date.now(),
  passBeyond: async t => {
    await waitFor(() => Date.now() > t, { timeoutMs: 10_000, description: 'the clock passed the expiry' });
  },
};

/** A clock that moves only when the suite asks it to: no real time passes. */
export function manualClock(start = Date.UTC(2030, 0, 1)): ContractClock {
  let now = start;
  return {
    manual: true,
    now: () => now,
    passBeyond: async t => {
      now = Math.max(now, t + 1);
    },
  };
}

export function describeDriverContract(label: string, open: () => Promise<Driver>, clock: ContractClock = realClock): void {
  describe(`driver contract: ${label}`, function () {
    behaviourGroup(this, 'driver contract');
    this.timeout(30_000);
    let driver: Driver;

    beforeEach(async () => {
      driver = await open();
    });
    afterEach(async () => {
      await driver?.close();
    });

    describe('identity', () => {
      it('has a known name and says whether it is distributed', () => {
        assert.ok(['memory', 'file', 'redis', 'etcd', 'git', 'sql'].includes(driver.name));
        assert.equal(typeof driver.distributed, 'boolean');
      });

      it('close() is safe to call twice', async () => {
        const other = await open();
        await other.close();
        await other.close();
      });
    });

    describe('plain leases: claim', () => {
      it('claims a free key and issues a positive integer fencing token and the expiry', async () => {
        const now = clock.now();
        const claim = await driver.claim(randomKey(), randomOwner(), LIVE_TTL_MS, now);
        assert.equal(claim.claimed, true);
        if (!claim.claimed) return;
        assert.ok(Number.isSafeInteger(claim.fencingToken) && claim.fencingToken >= 1, `token ${claim.fencingToken}`);
        // The expiry is an estimate; for drivers that use the given clock it is exact.
        assert.ok(Math.abs(claim.expiresAt - (now + LIVE_TTL_MS)) < 5_000, `expiresAt ${claim.expiresAt - now} ms ahead`);
      });

      it('refuses a live lease to another owner, and to the same owner (no re-entry)', async () => {
        const key = randomKey();
        const owner = randomOwner();
        assert.equal((await driver.claim(key, owner, LIVE_TTL_MS, clock.now())).claimed, true);
        assert.deepEqual(await driver.claim(key, randomOwner(), LIVE_TTL_MS, clock.now()), { claimed: false });
        assert.deepEqual(await driver.claim(key, owner, LIVE_TTL_MS, clock.now()), { claimed: false });
      });

      it('keeps keys apart', async () => {
        const a = await driver.claim(randomKey(), randomOwner(), LIVE_TTL_MS, clock.now());
        const b = await driver.claim(randomKey(), randomOwner(), LIVE_TTL_MS, clock.now());
        assert.equal(a.claimed && b.claimed, true);
      });

      it('lets exactly one of many concurrent claimants of a free key win', async () => {
        const key = randomKey();
        const results = await Promise.all(Array.from({ length: 12 }, () => driver.claim(key, randomOwner(), LIVE_TTL_MS, clock.now())));
        assert.equal(results.filter(r => r.claimed).length, 1, JSON.stringify(results));
      });

      it('hands an expired lease to a new owner with a higher fencing token, and not before it expired', async () => {
        const key = randomKey();
        const start = clock.now();
        const first = await driver.claim(key, randomOwner(), SHORT_TTL_MS, start);
        assert.ok(first.claimed);
        if (clock.manual) {
          await clock.passBeyond(start + SHORT_TTL_MS - 2);
          assert.deepEqual(await driver.claim(key, randomOwner(), LIVE_TTL_MS, clock.now()), { claimed: false }, 'a moment before expiry');
        }
        await clock.passBeyond(start + SHORT_TTL_MS);
        const second = await waitFor(
          async () => {
            const now = clock.now();
            const claim = await driver.claim(key, randomOwner(), LIVE_TTL_MS, now);
            if (!claim.claimed) return undefined;
            return { claim, now };
          },
          { timeoutMs: 10_000, description: 'takeover after expiry' },
        );
        assert.ok(second.now >= start + SHORT_TTL_MS, `taken over ${second.now - start} ms after a ${SHORT_TTL_MS} ms lease`);
        assert.ok(second.claim.claimed && second.claim.fencingToken > first.fencingToken);
      });
    });

    describe('plain leases: fencing counter', () => {
      it('issues strictly increasing tokens across claim/release cycles (the counter survives release)', async () => {
        const key = randomKey();
        const tokens: number[] = [];
        for (let i = 0; i < 10; i++) {
          const owner = randomOwner();
          const claim = await driver.claim(key, owner, LIVE_TTL_MS, clock.now());
          assert.ok(claim.claimed, `cycle ${i}`);
          tokens.push(claim.fencingToken);
          assert.equal(await driver.release(key, owner, clock.now()), 'released');
        }
        for (let i = 1; i < tokens.length; i++) assert.ok(tokens[i] > tokens[i - 1], `tokens ${tokens.join(',')}`);
      });
    });

    describe('plain leases: extend', () => {
      it("extends the owner's live lease, and nobody else's", async () => {
        const key = randomKey();
        const owner = randomOwner();
        assert.ok((await driver.claim(key, owner, LIVE_TTL_MS, clock.now())).claimed);
        assert.equal(await driver.extend(key, owner, LIVE_TTL_MS, clock.now()), true);
        assert.equal(await driver.extend(key, randomOwner(), LIVE_TTL_MS, clock.now()), false);
        assert.equal(await driver.extend(randomKey(), owner, LIVE_TTL_MS, clock.now()), false, 'no lease at all');
      });

      it('keeps an extended lease alive past its first expiry', async () => {
        const key = randomKey();
        const owner = randomOwner();
        const start = clock.now();
        const firstTtl = firstTtlMs(clock);
        assert.ok((await driver.claim(key, owner, firstTtl, start)).claimed);
        assert.equal(
          await driver.extend(key, owner, LIVE_TTL_MS, clock.now()),
          true,
          `the extend landed within the first ${firstTtl} ms lease`,
        );
        // Past the original expiry, the lease is still held.
        await clock.passBeyond(start + firstTtl + 100);
        assert.deepEqual(await driver.claim(key, randomOwner(), LIVE_TTL_MS, clock.now()), { claimed: false });
        assert.equal(await driver.release(key, owner, clock.now()), 'released');
      });

      it('does not revive an expired lease', async () => {
        const key = randomKey();
        const owner = randomOwner();
        assert.ok((await driver.claim(key, owner, SHORT_TTL_MS, clock.now())).claimed);
        // Past the lease's end however late the claim reached the store: a server that keeps its own time (Redis)
        // starts the lease when the command arrives, which on a busy machine can be well after it was sent.
        await clock.passBeyond(clock.now() + SHORT_TTL_MS + 100);
        assert.equal(await driver.extend(key, owner, LIVE_TTL_MS, clock.now()), false);
      });
    });

    describe('plain leases: release', () => {
      it("releases the owner's live lease once; the key is free again", async () => {
        const key = randomKey();
        const owner = randomOwner();
        assert.ok((await driver.claim(key, owner, LIVE_TTL_MS, clock.now())).claimed);
        assert.equal(await driver.release(key, owner, clock.now()), 'released');
        const second = await driver.release(key, owner, clock.now());
        assert.ok(second === 'absent' || second === 'expired', `second release said ${second}`);
        assert.equal((await driver.claim(key, randomOwner(), LIVE_TTL_MS, clock.now())).claimed, true);
      });

      it('says absent for a key never claimed', async () => {
        assert.equal(await driver.release(randomKey(), randomOwner(), clock.now()), 'absent');
      });

      it("refuses another owner's release of a live lease and leaves it intact", async () => {
        const key = randomKey();
        const owner = randomOwner();
        assert.ok((await driver.claim(key, owner, LIVE_TTL_MS, clock.now())).claimed);
        assert.equal(await driver.release(key, randomOwner(), clock.now()), 'other-owner');
        assert.deepEqual(await driver.claim(key, randomOwner(), LIVE_TTL_MS, clock.now()), { claimed: false }, 'still held');
        assert.equal(await driver.release(key, owner, clock.now()), 'released');
      });

      it('does not call a release after expiry "released", and a stale owner cannot free the new owner\'s lease', async () => {
        const key = randomKey();
        const stale = randomOwner();
        const first = await driver.claim(key, stale, SHORT_TTL_MS, clock.now());
        assert.ok(first.claimed);
        // Measured from the claim's answer, not its sending (see "does not revive an expired lease").
        await clock.passBeyond(clock.now() + SHORT_TTL_MS + 100);
        const expired = await driver.release(key, stale, clock.now());
        assert.ok(expired === 'expired' || expired === 'absent', `release after expiry said ${expired}`);

        assert.ok((await driver.claim(key, stale, SHORT_TTL_MS, clock.now())).claimed);
        await clock.passBeyond(clock.now() + SHORT_TTL_MS + 100);
        const fresh = randomOwner();
        const taken = await driver.claim(key, fresh, LIVE_TTL_MS, clock.now());
        assert.ok(taken.claimed);
        assert.equal(await driver.release(key, stale, clock.now()), 'other-owner');
        assert.deepEqual(await driver.claim(key, randomOwner(), LIVE_TTL_MS, clock.now()), { claimed: false }, 'new lease intact');
        assert.equal(await driver.release(key, fresh, clock.now()), 'released');
      });
    });

    describe('records: read and compareAndSwap', () => {
      const meta = { summary: 'contract test' };

      it('reads null for a missing record', async () => {
        assert.equal(await driver.read(randomKey()), null);
      });

      it('creates with a null expected revision and reads back the value and revision', async () => {
        const key = randomKey();
        const value = { holder: 'ann', grant: 7, queue: ['bob', 'cy'], note: 'ünïcødé ✓', nested: { a: [1, 2, { b: null }] } };
        const created = await driver.compareAndSwap(key, null, value, meta);
        assert.equal(created.ok, true);
        if (!created.ok) return;
        assert.equal(typeof created.revision, 'string');
        const read = await driver.read(key);
        assert.deepEqual(read, { value, revision: created.revision });
      });

      let page: ReturnType<typeof crowdedPage>;
      before(() => {
        page = crowdedPage();
      });

      it('keeps a crowded page (over 32 KiB of JSON, stored packed where the driver packs) exactly as written, and swaps it against its revision', async () => {
        const key = randomKey();
        const created = await driver.compareAndSwap(key, null, page, meta);
        assert.equal(created.ok, true);
        if (!created.ok) return;
        const read = await driver.read(key);
        assert.equal(read?.revision, created.revision);
        assert.equal(JSON.stringify(read?.value), JSON.stringify(page));
        const next = { ...page, grant: page.grant + 1 };
        const swapped = await driver.compareAndSwap(key, created.revision, next, meta);
        assert.equal(swapped.ok, true);
        assert.deepEqual(
          await driver.compareAndSwap(key, created.revision, page, meta),
          { ok: false },
          'the old revision no longer matches',
        );
        assert.equal(JSON.stringify((await driver.read(key))?.value), JSON.stringify(next));
      });

      it('refuses a second create (null expected) once the record exists', async () => {
        const key = randomKey();
        assert.equal((await driver.compareAndSwap(key, null, { n: 1 }, meta)).ok, true);
        assert.deepEqual(await driver.compareAndSwap(key, null, { n: 2 }, meta), { ok: false });
        assert.deepEqual((await driver.read(key))?.value, { n: 1 });
      });

      it('refuses a stale revision and leaves the record unchanged', async () => {
        const key = randomKey();
        const first = await driver.compareAndSwap(key, null, { n: 1 }, meta);
        assert.ok(first.ok);
        const second = await driver.compareAndSwap(key, first.revision, { n: 2 }, meta);
        assert.ok(second.ok);
        assert.deepEqual(await driver.compareAndSwap(key, first.revision, { n: 3 }, meta), { ok: false });
        assert.deepEqual(await driver.read(key), { value: { n: 2 }, revision: second.revision });
      });

      it('changes the revision on every write, even of an equal value', async () => {
        const key = randomKey();
        const revisions: string[] = [];
        let expected: string | null = null;
        for (let i = 0; i < 6; i++) {
          const written = await driver.compareAndSwap(key, expected, { same: true }, meta);
          assert.ok(written.ok, `write ${i}`);
          revisions.push(written.revision);
          expected = written.revision;
        }
        assert.equal(new Set(revisions).size, revisions.length, `revisions ${revisions.join(',')}`);
      });

      it('lets exactly one of two concurrent writers from the same base win', async () => {
        const key = randomKey();
        const base = await driver.compareAndSwap(key, null, { n: 0 }, meta);
        assert.ok(base.ok);
        const [a, b] = await Promise.all([
          driver.compareAndSwap(key, base.revision, { by: 'a' }, meta),
          driver.compareAndSwap(key, base.revision, { by: 'b' }, meta),
        ]);
        assert.equal([a, b].filter(r => r.ok).length, 1, JSON.stringify([a, b]));
        const winner = a.ok ? a : b;
        const read = await driver.read(key);
        assert.deepEqual(read, { value: a.ok ? { by: 'a' } : { by: 'b' }, revision: winner.ok ? winner.revision : '' });
      });

      it('lets exactly one of two concurrent creators win', async () => {
        const key = randomKey();
        const results = await Promise.all([
          driver.compareAndSwap(key, null, { by: 'a' }, meta),
          driver.compareAndSwap(key, null, { by: 'b' }, meta),
        ]);
        assert.equal(results.filter(r => r.ok).length, 1, JSON.stringify(results));
      });

      it('loses no update when many writers increment through read + compareAndSwap', async function () {
        // 30 increments by 6 racing writers: on the git driver each is a push, and a loaded machine needs minutes.
        this.timeout(180_000);
        const key = randomKey();
        assert.ok((await driver.compareAndSwap(key, null, { n: 0 }, meta)).ok);
        const increment = async () => {
          for (;;) {
            const current = await driver.read(key);
            assert.ok(current);
            const n = (current.value as { n: number }).n;
            if ((await driver.compareAndSwap(key, current.revision, { n: n + 1 }, meta)).ok) return;
          }
        };
        await Promise.all(
          Array.from({ length: 6 }, () =>
            (async () => {
              for (let i = 0; i < 5; i++) await increment();
            })(),
          ),
        );
        assert.deepEqual((await driver.read(key))?.value, { n: 30 });
      });

      it('keeps records and plain leases on the same key apart', async () => {
        const key = randomKey();
        assert.ok((await driver.claim(key, randomOwner(), LIVE_TTL_MS, clock.now())).claimed);
        assert.equal(await driver.read(key), null);
        assert.ok((await driver.compareAndSwap(key, null, { n: 1 }, meta)).ok);
        assert.deepEqual(await driver.claim(key, randomOwner(), LIVE_TTL_MS, clock.now()), { claimed: false });
      });

      it('calls a watcher after a write, when the driver can watch', async function () {
        if (!driver.watch) {
          // Watching is optional (store.ts); say so instead of passing silently.
          this.skip();
        }
        const key = randomKey();
        let calls = 0;
        const watcher = driver.watch!(key, () => {
          calls++;
        });
        try {
          assert.ok((await driver.compareAndSwap(key, null, { n: 1 }, meta)).ok);
          await waitFor(() => calls > 0, { timeoutMs: 5_000, description: 'watcher called' });
        } finally {
          watcher.dispose();
        }
      });
    });
  });
}
