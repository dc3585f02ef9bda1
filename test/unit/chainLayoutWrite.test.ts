import * as assert from 'node:assert/strict';
import { LockStorageError } from '../../src/core/errors';
import { createMemoryDriver } from '../../src/core/stores/memory';
import { SignedChainDriver } from '../../src/core/stores/signedChainDriver';

/**
 * A page stored in a later chain layout than this version reads is newer, not tampered: an operator's
 * adopt (replaceRecord) is refused where the page is written, whatever its caller read before, and the
 * page is left as it is (README Known limits: a Lockstep from before layout 2 did not know this).
 */
describe('signed chain: a page in a later layout is never replaced', () => {
  const future = { lockstepChain: 3, steps: [{ future: true }] };

  it('replaceRecord refuses a layout 3 page as newer (upgrade), without writing', async () => {
    const inner = createMemoryDriver();
    const written = await inner.compareAndSwap('k', null, future, { summary: 'init' });
    assert.ok(written.ok);
    // No clone and no signing key: the layout is checked before anything is signed or written.
    const signed = new SignedChainDriver(inner, undefined);
    await assert.rejects(signed.replaceRecord('k', written.revision, { adopted: true }), (e: unknown) => {
      assert.ok(e instanceof LockStorageError);
      assert.match(e.message, /written by a newer version of Lockstep: .*layout 3.*do not adopt over it/);
      return true;
    });
    assert.deepEqual((await inner.read('k'))?.value, future);
  });

  it('a revision that moved meanwhile is answered {ok:false}, as any compare-and-swap', async () => {
    const inner = createMemoryDriver();
    assert.ok((await inner.compareAndSwap('k', null, future, { summary: 'init' })).ok);
    assert.deepEqual(await new SignedChainDriver(inner, undefined).replaceRecord('k', 'stale', { adopted: true }), { ok: false });
  });
});
