import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createLockManager } from '../../src/core/leases';
import { makeTempDir, removeTempDir } from '../helpers/tempDir';

// Moved out of the unit suite: these touch the disk and a socket (auto's Redis probe), as a first use does.
describe('config: creating a manager opens nothing', () => {
  let parent: string;
  beforeEach(() => {
    parent = makeTempDir('lockstep-config');
  });
  afterEach(() => removeTempDir(parent));

  for (const driver of ['file', 'auto'] as const) {
    it(`creates no folder for the ${driver} driver until the first operation`, async () => {
      const store = path.join(parent, 'does', 'not', 'exist', 'yet');
      // Port 1 refuses connections at once, so auto's Redis probe falls back to file.
      const manager = createLockManager({
        env: { LOCKSTEP_DRIVER: driver, LOCKSTEP_PATH: store, LOCKSTEP_REDIS_URL: 'redis://127.0.0.1:1' },
      });
      assert.equal(fs.existsSync(path.join(parent, 'does')), false, 'createLockManager touched the disk');
      assert.equal(manager.config.path, store);
      // The same check can fail: the first operation does create it.
      const handle = await manager.acquire('first-use');
      assert.equal(handle.acquired, true);
      assert.equal(fs.existsSync(store), true);
      assert.equal(await manager.driverName(), 'file', 'auto falls back to file when Redis does not answer');
      await handle.release();
      await manager.close();
    });
  }

  it('close() of a manager that never worked opens nothing either', async () => {
    const store = path.join(parent, 'never');
    const manager = createLockManager({ env: { LOCKSTEP_DRIVER: 'file', LOCKSTEP_PATH: store } });
    await manager.close();
    assert.equal(fs.existsSync(store), false);
  });

  it('auto decides once per manager', async () => {
    const manager = createLockManager({ driver: 'auto', path: path.join(parent, 'auto'), redisUrl: 'redis://127.0.0.1:1', env: {} });
    const names = [await manager.driverName(), await manager.driverName()];
    assert.deepEqual(names, ['file', 'file']);
    await manager.close();
  });
});
