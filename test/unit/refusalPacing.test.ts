import * as assert from 'node:assert/strict';
import { CasDriver } from '../../src/core/stores/casDriver';
import { MemoryCells } from '../../src/core/stores/memory';
import { RefusalPacing } from '../../src/core/stores/refusalPacing';

/** A pause long enough that a test which depended on its timer would time out instead of passing. */
const FOREVER = 600_000;

/** Resolves after `turns` turns of the event loop. */
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise(resolve => setImmediate(resolve));
};

/** Tracks whether a promise has settled yet. */
function settledFlag(promise: Promise<unknown>): { readonly done: boolean } {
  const flag = { done: false };
  void promise.then(() => {
    flag.done = true;
  });
  return flag;
}

describe('RefusalPacing: clients that retry a refused claim in a tight loop', () => {
  let clock = 0;
  const pacing = () => new RefusalPacing({ now: () => clock, hotMs: 1, pauseMs: FOREVER });

  beforeEach(() => {
    clock = 0;
  });

  it('answers a first refusal after one turn of the event loop, never a pause', async () => {
    const client = pacing();
    const first = settledFlag(client.refused('k-first'));
    await turns(2);
    assert.equal(first.done, true);
  });

  it('pauses a refusal of the same key right after the last one, until a release of the key wakes it', async () => {
    const client = pacing();
    await client.refused('k-spin');
    const spin = settledFlag(client.refused('k-spin'));
    await turns(5);
    assert.equal(spin.done, false, 'a spinning client waits');
    client.released('k-spin');
    await turns(1);
    assert.equal(spin.done, true, 'the release ended the pause');
  });

  it('a release wakes only the client paused longest, so the others are not all refused again at once', async () => {
    const [a, b, c] = [pacing(), pacing(), pacing()];
    for (const client of [a, b, c]) await client.refused('k-queue');
    const pausedA = settledFlag(a.refused('k-queue'));
    const pausedB = settledFlag(b.refused('k-queue'));
    const pausedC = settledFlag(c.refused('k-queue'));
    c.released('k-queue');
    await turns(1);
    assert.deepEqual([pausedA.done, pausedB.done, pausedC.done], [true, false, false]);
    a.released('k-queue');
    await turns(1);
    assert.deepEqual([pausedB.done, pausedC.done], [true, false]);
    b.released('k-queue');
    await turns(1);
    assert.equal(pausedC.done, true);
  });

  it('does not pause a refusal that comes long after the last one, nor one of another key', async () => {
    const client = pacing();
    await client.refused('k-slow');
    clock += 5;
    const later = settledFlag(client.refused('k-slow'));
    const other = settledFlag(client.refused('k-other'));
    await turns(2);
    assert.deepEqual([later.done, other.done], [true, true]);
  });

  it('a claim ends the spin: the next refusal of that key answers after one turn', async () => {
    const client = pacing();
    await client.refused('k-claimed');
    client.claimed('k-claimed');
    const next = settledFlag(client.refused('k-claimed'));
    await turns(2);
    assert.equal(next.done, true);
  });

  it('a release of a key nobody waits on, or of another key, wakes nothing', async () => {
    const client = pacing();
    client.released('k-nobody');
    await client.refused('k-mine');
    const paused = settledFlag(client.refused('k-mine'));
    client.released('k-not-mine');
    await turns(3);
    assert.equal(paused.done, false);
    client.released('k-mine');
    await turns(1);
    assert.equal(paused.done, true);
  });
});

describe("CasDriver with synchronous cells (the file driver's wiring of RefusalPacing)", () => {
  const clock = 0;
  const cells = new MemoryCells();
  const client = () => new CasDriver('file', false, cells, { yieldToIo: true, pacing: { now: () => clock, hotMs: 1, pauseMs: FOREVER } });
  const key = 'ab'.repeat(32);
  const [OWNER_A, OWNER_B] = ['a'.repeat(64), 'b'.repeat(64)];

  it("pauses a client refused twice in a row, and the holder's release in this process wakes it to claim", async () => {
    const [holder, spinner] = [client(), client()];
    const held = await holder.claim(key, OWNER_A, 30_000, 1_000);
    assert.equal(held.claimed, true);
    assert.deepEqual(await spinner.claim(key, OWNER_B, 30_000, 1_000), { claimed: false });
    const second = spinner.claim(key, OWNER_B, 30_000, 1_000);
    const paused = settledFlag(second);
    await turns(5);
    assert.equal(paused.done, false, 'the spinning client waits for its answer');
    assert.equal(await holder.release(key, OWNER_A, 1_001), 'released');
    assert.deepEqual(await second, { claimed: false }, 'the paused attempt read the lease while it was held');
    const retry = await spinner.claim(key, OWNER_B, 30_000, 1_002);
    assert.equal(retry.claimed, true, 'the woken client takes the released lease');
  });
});
