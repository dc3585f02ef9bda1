import * as assert from 'node:assert/strict';
import type { ResolvedConfig } from '../../src/core/config';
import { parseContainerFile } from '../../src/core/container/containerFile';
import { PageWithoutClone } from '../../src/core/container/guardPageAccess';
import { containerKey } from '../../src/core/container/pageSettings';
import { LockNoPageError } from '../../src/core/errors';
import * as protocol from '../../src/core/lockRecord';
import { createMemoryDriver } from '../../src/core/stores/memory';
import type { Driver } from '../../src/core/stores/store';

/**
 * The page as the server guard opens it, without a clone (issue #31): its store settings are resolved
 * once and its driver is opened once per push, also when a refused push is then audited on the page
 * (which used to open the store a second time). The driver is the real memory driver; only the opener is
 * counted.
 */
describe('the page without a clone: one store opened per guarded push', () => {
  const CONTAINER = '0b7c9c3e-5d4f-4a8b-9c1d-2e3f4a5b6c7d';
  const file = parseContainerFile(JSON.stringify({ container: CONTAINER, driver: 'file', protectedBranches: ['main'], operators: [] }));
  const T0 = Date.UTC(2026, 11, 1, 9);

  /** One shared store holding the container's page, and an opener that counts what it opens and closes. */
  async function store(withPage: boolean) {
    const shared = createMemoryDriver();
    const seen = { opened: 0, closed: 0, reads: 0, prefixes: [] as string[] };
    if (withPage) {
      const created = protocol.createPage(CONTAINER, { identity: 'ops@example.com' }, T0);
      assert.ok(created.ok);
      await shared.compareAndSwap(containerKey('lockstep', CONTAINER), null, created.record, { summary: 'init' });
    }
    const open = async (config: ResolvedConfig): Promise<Driver> => {
      seen.opened++;
      seen.prefixes.push(config.prefix);
      return new Proxy(shared, {
        get(target, property) {
          if (property === 'close') return async () => void seen.closed++;
          if (property === 'read')
            return async (key: string) => {
              seen.reads++;
              return target.read(key);
            };
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    };
    return { shared, seen, open };
  }

  it('reads the record and audits a refused push through one opened store, closed once', async () => {
    const { shared, seen, open } = await store(true);
    const page = new PageWithoutClone(file, '/srv/repo.git', { path: '/srv/lockstep' }, open);
    const { record, page: where } = await page.read();
    assert.equal(record.grant, 0);
    assert.equal(where.driver, 'memory');
    const audited = await page.auditRefusedPush(
      { identity: 'mallory@example.com', grant: 3, detail: 'server guard refused a push to main' },
      T0 + 1,
    );
    assert.equal(audited, true);
    await page.close();
    assert.deepEqual([seen.opened, seen.closed, seen.reads], [1, 1, 1], 'the audit starts from the read');
    const stored = await shared.read(containerKey(seen.prefixes[0]!, CONTAINER));
    assert.ok(stored !== null);
    const last = (stored.value as protocol.LockRecord).audit.at(-1);
    assert.deepEqual([last?.action, last?.outcome, last?.who, last?.grant], ['push', 'refused', 'mallory@example.com', 3]);
  });

  it('an audit whose page moved since the read reads it again and still lands', async () => {
    const { shared, seen, open } = await store(true);
    const page = new PageWithoutClone(file, '/srv/repo.git', { path: '/srv/lockstep' }, open);
    await page.read();
    const key = containerKey(seen.prefixes[0]!, CONTAINER);
    const current = await shared.read(key);
    assert.ok(current !== null);
    const elsewhere = protocol.petition(current.value as protocol.LockRecord, { identity: 'bob@example.com' }, T0 + 1);
    assert.ok(elsewhere.ok);
    assert.ok((await shared.compareAndSwap(key, current.revision, elsewhere.record, { summary: 'petition' })).ok);
    assert.equal(await page.auditRefusedPush({ identity: 'mallory@example.com', grant: 0, detail: 'refused' }, T0 + 2), true);
    await page.close();
    assert.equal(seen.reads, 2, 'the lost race read the page again');
    const after = await shared.read(key);
    assert.ok(after !== null);
    const lines = (after.value as protocol.LockRecord).audit.map(l => l.action);
    assert.deepEqual(lines.slice(-2), ['petition', 'push']);
  });

  it('a store without the page is no free lock: the read says which page it looked for, and the store is still opened once', async () => {
    const { seen, open } = await store(false);
    const page = new PageWithoutClone(file, '/srv/repo.git', { path: '/srv/lockstep' }, open);
    const error = await page.read().then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof LockNoPageError, String(error));
    assert.equal(await page.auditRefusedPush({ identity: 'mallory@example.com', grant: 0, detail: 'refused' }, T0), false);
    await page.close();
    assert.deepEqual([seen.opened, seen.closed], [1, 1]);
  });

  it('opens nothing when the push needs no page', async () => {
    const { seen, open } = await store(true);
    await new PageWithoutClone(file, '/srv/repo.git', {}, open).close();
    assert.deepEqual([seen.opened, seen.closed], [0, 0]);
  });
});
