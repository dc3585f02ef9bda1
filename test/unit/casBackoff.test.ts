import * as assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock';
import {
  CAS_BACKOFF_CAP_MS,
  CAS_BACKOFF_CAP_ROUND_TRIPS,
  casRetryPause,
  MIN_ROUND_TRIP_MS,
  type SwapPrecedence,
} from '../../src/core/container/casBackoff';
import { MAX_CAS_ATTEMPTS, swap, type SwapPage } from '../../src/core/container/swapService';
import { LockBackendError } from '../../src/core/errors';
import { emptyRecord, type LockRecord } from '../../src/core/lockRecord';
import { createMemoryDriver } from '../../src/core/stores/memory';

const half = () => 0.5;
const pauses = (precedence: SwapPrecedence, roundTripMs: number, lost: number, random: () => number) =>
  Array.from({ length: lost }, (_, i) => casRetryPause(i + 1, roundTripMs, precedence, random));

describe('casRetryPause: the wait after a lost compare-and-swap race (issue 30, fifty clones at once)', () => {
  it('others back off with full jitter: uniform in 0…min(cap, round trip × 2^lost), doubling with each lost race', () => {
    assert.deepEqual(pauses('others', 10, 6, half), [10, 20, 40, 80, 160, 320]);
    assert.deepEqual(
      pauses('others', 10, 3, () => 0),
      [0, 0, 0],
      'the jitter reaches 0',
    );
    const top = pauses('others', 10, 3, () => 1 - Number.EPSILON);
    for (const [i, pause] of top.entries()) assert.ok(pause < 10 * 2 ** (i + 1) && pause > 10 * 2 ** (i + 1) - 1e-9);
  });

  it('others never wait longer than the cap: one second, or eight round trips of a slow driver', () => {
    assert.equal(CAS_BACKOFF_CAP_ROUND_TRIPS, 8);
    assert.deepEqual(pauses('others', 2, 11, half).slice(7), [256, 500, 500, 500], 'file, SQL: 1 s');
    assert.equal(casRetryPause(MAX_CAS_ATTEMPTS - 1, 2, 'others', half), CAS_BACKOFF_CAP_MS / 2);
    assert.equal(casRetryPause(2_000, 2, 'others', half), CAS_BACKOFF_CAP_MS / 2, '2^2000 is Infinity, still capped');
    // A push to a forge: a cap shorter than a few round trips would bring the collisions back.
    assert.deepEqual(pauses('others', 400, 5, half), [400, 800, 1_600, 1_600, 1_600], 'git: 8 × 400 ms');
    const max = () => 1 - Number.EPSILON;
    for (const roundTrip of [2, 400, 1_500]) {
      const cap = Math.max(CAS_BACKOFF_CAP_MS, CAS_BACKOFF_CAP_ROUND_TRIPS * roundTrip);
      const total = pauses('others', roundTrip, MAX_CAS_ATTEMPTS - 1, max).reduce((a, b) => a + b, 0);
      assert.ok(total < (MAX_CAS_ATTEMPTS - 1) * cap, `all pauses of one transition are bounded: ${total} ms`);
    }
  });

  it('the holder retries at once after its first lost race, then within one round trip, never growing', () => {
    assert.deepEqual(pauses('holder', 10, 5, half), [0, 5, 5, 5, 5]);
    assert.deepEqual(pauses('holder', 1_500, 3, half), [0, 750, 750], 'a slow round trip');
    for (let lost = 1; lost < MAX_CAS_ATTEMPTS; lost++) {
      assert.ok(casRetryPause(lost, 10, 'holder', half) < casRetryPause(lost, 10, 'others', half), `after ${lost} lost`);
    }
  });

  it('a round trip too short to measure (a manual clock, the memory driver) counts as the minimum, so back-off still grows', () => {
    assert.deepEqual(pauses('others', 0, 3, half), [MIN_ROUND_TRIP_MS, 2 * MIN_ROUND_TRIP_MS, 4 * MIN_ROUND_TRIP_MS]);
    assert.equal(casRetryPause(1, Number.NaN, 'others', half), MIN_ROUND_TRIP_MS);
    assert.equal(casRetryPause(1, -5, 'others', half), MIN_ROUND_TRIP_MS);
  });
});

describe('swap: the pauses between its attempts follow its own round trip and its precedence', () => {
  const KEY = 'page';
  const bump = (record: LockRecord) => ({
    ok: true as const,
    record: { ...record, grant: record.grant + 1 },
    value: record.grant + 1,
    summary: 'bump',
  });

  /**
   * A page on the memory driver where a rival's write lands right after each of this swap's first `losses` reads,
   * and each read takes `readMs` and each write `writeMs` on the manual clock.
   */
  async function racedPage(clock: ManualClock, losses: number, readMs: number, writeMs: number): Promise<SwapPage> {
    const driver = createMemoryDriver();
    assert.equal((await driver.compareAndSwap(KEY, null, emptyRecord('c'), { summary: 'create' })).ok, true);
    const write = driver.compareAndSwap.bind(driver);
    driver.compareAndSwap = async (...args) => {
      clock.advance(writeMs);
      return write(...args);
    };
    let reads = 0;
    return {
      driver,
      key: KEY,
      read: async () => {
        const stored = await driver.read(KEY);
        assert.ok(stored);
        clock.advance(readMs);
        if (reads++ < losses) {
          // The same record again: the revision moves, and this swap's answer stays the one to expect.
          assert.equal((await write(KEY, stored.revision, stored.value, { summary: 'rival' })).ok, true);
        }
        return { record: stored.value as LockRecord, revision: stored.revision };
      },
    };
  }

  it("others: each pause is drawn from this swap's read + write time, doubling", async () => {
    const clock = new ManualClock();
    const page = await racedPage(clock, 4, 10, 30);
    assert.equal(await swap(page, clock, bump, { random: half }), 1);
    assert.deepEqual(clock.sleeps, [40, 80, 160, 320]);
  });

  it('the holder: no pause after its first lost race, then at most one round trip', async () => {
    const clock = new ManualClock();
    const page = await racedPage(clock, 4, 10, 30);
    assert.equal(await swap(page, clock, bump, { random: half, precedence: 'holder' }), 1);
    assert.deepEqual(clock.sleeps, [0, 20, 20, 20]);
  });

  it("a first attempt on the caller's read: its write alone stands for the round trip", async () => {
    const clock = new ManualClock();
    const page = await racedPage(clock, 1, 10, 30);
    const first = await page.read(); // a rival lands after it: the first write loses
    assert.equal(await swap(page, clock, bump, { random: half, first }), 1);
    assert.deepEqual(clock.sleeps, [60]);
  });

  it(`a page that changes under every attempt: ${MAX_CAS_ATTEMPTS} attempts, then a typed, retryable error`, async () => {
    const clock = new ManualClock();
    const page = await racedPage(clock, Number.POSITIVE_INFINITY, 1, 1);
    await assert.rejects(
      swap(page, clock, bump, { random: half }),
      (error: unknown) => error instanceof LockBackendError && error.retryable,
    );
    assert.equal(clock.sleeps.length, MAX_CAS_ATTEMPTS - 1);
    assert.equal(clock.sleeps.at(-1), CAS_BACKOFF_CAP_MS / 2);
  });
});
