import * as assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock';
import { LockError } from '../../src/core/errors';
import { createLockManager, type LockHandle } from '../../src/core/leases';
import { keyDigest } from '../../src/core/names';
import { CasDriver, type CasCells } from '../../src/core/stores/casDriver';
import { createMemoryDriver } from '../../src/core/stores/memory';
import { jsonText } from '../../src/core/stores/serializedJson';
import type { Driver } from '../../src/core/stores/store';
import { hashToken } from '../../src/core/tokens';
import { assertHygienic } from '../helpers/hygiene';

/**
 * Seed 003: no error contains a lock name, an owner token, a raw backend key or a credential.
 * Every path below must throw (the test counts them) and every error is checked in every form it
 * can be printed in: message, stack, String(), util.inspect (with causes), JSON of its own fields.
 */
/** In-memory cells whose writes can be switched off, to make a backend that never lets a write through. */
function switchableCells(): CasCells & { refuseWrites: boolean } {
  const cells = new Map<string, { text: string; revision: number }>();
  return {
    refuseWrites: false,
    async get(cell) {
      const entry = cells.get(cell);
      return entry ? { value: JSON.parse(entry.text), revision: String(entry.revision) } : null;
    },
    async put(cell, expected, value) {
      const entry = cells.get(cell);
      if (this.refuseWrites || (entry ? String(entry.revision) : null) !== expected) return { ok: false };
      const revision = (entry?.revision ?? 0) + 1;
      cells.set(cell, { text: jsonText(value) as string, revision });
      return { ok: true, revision: String(revision) };
    },
    close: async () => undefined,
  };
}

const NAME = 'Zq7Hygiene-Distinctive:Name.Never_Echoed';
const PREFIX = 'hygiene-prefix-Xk2';

describe('error hygiene: no name, token or backend key in any error', () => {
  const thrown: { where: string; error: unknown }[] = [];
  const tokens: string[] = [];
  const secrets = () => [NAME, 'Zq7Hygiene', keyDigest(PREFIX, NAME), ...tokens, ...tokens.map(hashToken)];

  async function collect(where: string, action: () => unknown): Promise<void> {
    try {
      await action();
    } catch (error) {
      thrown.push({ where, error });
      return;
    }
    assert.fail(`${where}: expected an error`);
  }

  function manager(driver: Driver = createMemoryDriver(), clock = new ManualClock()) {
    return createLockManager({ driverInstance: driver, clock, env: {}, prefix: PREFIX });
  }
  const keep = (h: LockHandle) => {
    if (h.acquired) tokens.push(h.ownerToken());
    return h;
  };

  before(async () => {
    const m = manager();
    // Invalid names built around the distinctive text.
    for (const bad of [
      `${NAME}/x`,
      `${NAME} `,
      `${NAME}*`,
      `${NAME}\0`,
      `${NAME}\u00e9`,
      NAME + 'x'.repeat(201 - NAME.length),
      `-${NAME}`,
    ]) {
      await collect(`name ${JSON.stringify(bad.slice(-3))}`, () => m.acquire(bad));
      await collect(`run name ${JSON.stringify(bad.slice(-3))}`, () => m.run(bad, () => undefined));
    }
    // Bounds with a valid distinctive name.
    await collect('ttl too small', () => m.acquire(NAME, { ttl: 0.999 }));
    await collect('ttl too large', () => m.acquire(NAME, { ttl: 86_401 }));
    await collect('wait negative', () => m.acquire(NAME, { wait: -1 }));
    await collect('wait too large', () => m.acquire(NAME, { wait: 60.01 }));

    // Contention: busy, no token, stale owner.
    const clock = new ManualClock();
    const shared = createMemoryDriver();
    const a = manager(shared, clock);
    const b = manager(shared, clock);
    const stale = keep(await a.acquire(NAME, { ttl: 5 }));
    const lost = await b.acquire(NAME);
    await collect('ownerToken of a handle that did not acquire', () => lost.ownerToken());
    await collect('run busy', () => b.run(NAME, () => undefined, { wait: 1 }));
    clock.advance(5_000);
    keep(await b.acquire(NAME, { ttl: 5 }));
    await collect('stale release', () => stale.release());
    await collect('run with an overrun lease', () =>
      a.run(
        `${NAME}-2`,
        async () => {
          clock.advance(5_000);
          keep(await b.acquire(`${NAME}-2`));
        },
        { ttl: 5 },
      ),
    );

    // A damaged stored lease and a store that never lets a write through.
    const garbage: CasCells = {
      get: async () => ({ value: { v: 1, owner: NAME, counter: 'x' }, revision: '1' }),
      put: async () => ({ ok: true, revision: '2' }),
      close: async () => undefined,
    };
    await collect('damaged record (claim)', () => manager(new CasDriver('memory', false, garbage)).acquire(NAME));
    // A store that accepts the claim, then refuses every write: the release gives up with a backend error.
    const cells = switchableCells();
    const writer = manager(new CasDriver('memory', false, cells));
    const held = keep(await writer.acquire(NAME));
    cells.refuseWrites = true;
    await collect('backend keeps refusing the release', () => held.release());

    // Closed manager; configuration read from a distinctive environment.
    const closed = manager();
    await closed.close();
    await collect('closed manager', () => closed.acquire(NAME));
    await collect('unknown driver in env', () => createLockManager({ env: { LOCKSTEP_DRIVER: NAME } }));
    await collect('relative path in env', () => createLockManager({ env: { LOCKSTEP_PATH: `${NAME}/store` } }));
    await collect('bad prefix in env', () => createLockManager({ env: { LOCKSTEP_PREFIX: `${NAME}/x` } }));
    await collect('bad boolean in env', () => createLockManager({ env: { LOCKSTEP_REQUIRE_DISTRIBUTED: NAME } }));
  });

  it('every path threw (29 errors; 4 owner tokens in play)', () => {
    assert.equal(thrown.length, 29);
    assert.equal(tokens.length, 4);
  });

  it('the check itself catches a leak in a message, a field or a cause', () => {
    const leaks = [
      new Error(`bad ${NAME}`),
      Object.assign(new Error('fine'), { detail: NAME }),
      Object.defineProperty(new Error('fine'), 'hidden', { value: NAME, enumerable: false }),
      new Error('fine', { cause: new Error(`path /x/${keyDigest(PREFIX, NAME)}`) }),
    ];
    for (const leak of leaks) assert.throws(() => assertHygienic(leak, secrets(), 'self-test'), assert.AssertionError);
  });

  it('every collected error is a typed LockError', () => {
    for (const { where, error } of thrown) assert.ok(error instanceof LockError, `${where}: ${String(error)}`);
  });

  it('no collected error mentions the name, an owner token, its hash or the backend key', () => {
    for (const { where, error } of thrown) assertHygienic(error, secrets(), where);
  });
});
