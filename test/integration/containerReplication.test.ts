import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Container } from '../../src/core/container/container';
import { LockReplicationError } from '../../src/core/errors';
import { createPage } from '../../src/core/lockRecord';
import { createMemoryDriver } from '../../src/core/stores/memory';
import type { Driver } from '../../src/core/stores/store';
import { useTempDir } from '../helpers/tempDir';

/**
 * A container write that too few replicas confirmed (Redis Sentinel or Cluster with minReplicas)
 * stayed on the master: the acquisition may have taken effect, so the clone must keep the new
 * token. So must any other failure whose outcome is unknown: the token waits in pending.json, and the
 * next read of the page finishes the acquire (the page names it) or keeps waiting (it does not).
 * A real clone; the store is the memory driver, made to answer a write with the replication error.
 */
describe('container acquire when replicas do not confirm the write', () => {
  const tmp = useTempDir('lockstep-replication');

  async function clone(): Promise<{
    container: Container;
    control: { failWrites: 'replication' | 'none'; cas: Driver['compareAndSwap'] | undefined };
  }> {
    const dir = path.join(tmp.path, 'work');
    execFileSync('git', ['init', '-q', dir]);
    execFileSync('git', ['-C', dir, 'config', 'user.email', 'lead@example.com']);
    // The shared remote is a remote of the clone, outside its work tree.
    const remote = path.join(tmp.path, 'remote.git');
    execFileSync('git', ['init', '-q', '--bare', remote]);
    execFileSync('git', ['-C', dir, 'remote', 'add', 'origin', remote]);
    fs.writeFileSync(
      path.join(dir, '.lockstep.json'),
      JSON.stringify({
        container: '0b7e2c1a-5d4f-4c3b-9a2e-1f0d3c4b5a69',
        driver: 'memory',
        protectedBranches: ['main'],
        operators: ['lead@example.com'],
      }),
    );
    const memory = createMemoryDriver();
    const control = { failWrites: 'none' as 'replication' | 'none', cas: undefined as Driver['compareAndSwap'] | undefined };
    const replicatedCas: Driver['compareAndSwap'] = async (key, expected, next, meta) => {
      const written = await memory.compareAndSwap(key, expected, next, meta);
      if (written.ok && control.failWrites === 'replication') {
        throw new LockReplicationError('redis', 0, 1, 'The write reached 0 of the 1 replicas required in time.');
      }
      return written;
    };
    // The memory driver with its compare-and-swap replaced (methods bound to it: its fields are private).
    const driver = new Proxy(memory, {
      get(target, prop) {
        if (prop === 'compareAndSwap') return control.cas ?? replicatedCas;
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Driver;
    const container = await Container.open({ cwd: dir, env: {}, driverInstance: driver });
    const page = createPage(container.file.container, { identity: 'lead@example.com' }, Date.now());
    assert.ok(page.ok);
    assert.ok((await memory.compareAndSwap(container.key, null, page.record, { summary: 'init' })).ok);
    return { container, control };
  }

  it("keeps the new session: status then shows the grant as this clone's, and release works", async () => {
    const { container, control } = await clone();
    control.failWrites = 'replication';
    await assert.rejects(container.acquire(), LockReplicationError);
    assert.equal(container.pendingAcquire()?.grant, 1, 'the token of the write that stayed on the master is kept');
    control.failWrites = 'none';
    assert.equal((await container.status()).state, 'held-by-me');
    assert.equal(container.session()?.grant, 1, 'the next read finished the acquire');
    assert.equal(container.pendingAcquire(), undefined);
  });

  it('a failure before the write keeps the attempt pending, never a session; the page stays free', async () => {
    const { container, control } = await clone();
    control.cas = async () => {
      throw new Error('connection reset');
    };
    await assert.rejects(container.acquire(), /connection reset/);
    assert.equal(container.session(), undefined);
    control.cas = undefined;
    assert.equal((await container.status()).state, 'free');
    assert.equal(container.pendingAcquire()?.grant, 1, 'kept while its write could still arrive');
    assert.equal((await container.acquire()).grant, 1, 'acquire again is the same attempt');
    assert.equal(container.pendingAcquire(), undefined);
  });
});
