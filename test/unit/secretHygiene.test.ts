import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { format, inspect } from 'node:util';
import { ManualClock } from '../../src/core/clock';
import { resolveConfig, type LockManagerOptions } from '../../src/core/config';
import { openDriver } from '../../src/core/drivers';
import { createLockManager, type LockHandle, type LockManager } from '../../src/core/leases';
import { createFileDriver } from '../../src/core/stores/file';
import { createGitDriver } from '../../src/core/stores/git/gitDriver';
import { createMemoryDriver } from '../../src/core/stores/memory';
import type { Driver } from '../../src/core/stores/store';
import { hashToken } from '../../src/core/tokens';
import { useTempDir } from '../helpers/tempDir';

/**
 * Secrets stay secret in every representation (docs/leases.md#secrets): managers, handles,
 * resolved settings and drivers print no credential, no owner token and no token hash, however
 * they are printed. Network drivers are built from URLs that carry a password and never connect.
 */
const PASSWORD = 'Pw7-Hygiene-Secret';
const USER = 'hygiene_user';
const REDIS_URL = `redis://${USER}:${PASSWORD}@127.0.0.1:1/0`;
const PG_URL = `postgres://${USER}:${PASSWORD}@127.0.0.1:1/lockstep_x`;
const MYSQL_URL = `mysql://${USER}:${PASSWORD}@127.0.0.1:1/lockstep_x`;
const GIT_URL = `https://${USER}:${PASSWORD}@git.example.invalid/team/repo.git`;

/** Every way a value reaches a log, a JSON response or a terminal. */
function renderings(value: object): string[] {
  const spread = { ...value };
  return [
    inspect(value),
    inspect(value, { depth: Infinity, showHidden: true, getters: true }),
    JSON.stringify(value) ?? '',
    inspect(spread, { depth: Infinity, showHidden: true }),
    JSON.stringify(spread),
    inspect(Object.entries(value), { depth: Infinity, showHidden: true }),
    format('%s %o %j', value, value, value),
    String(value),
  ];
}

function assertSecret(value: object, secrets: readonly string[], where: string): void {
  for (const text of renderings(value)) {
    for (const secret of secrets) {
      assert.ok(!text.includes(secret), `${where} prints ${secret.slice(0, 8)}…:\n${text.slice(0, 800)}`);
    }
  }
}

describe('secret hygiene: managers, handles, settings and drivers print no credential or token', () => {
  const dir = useTempDir('lockstep-secrets', 'suite');
  const opened: { close(): Promise<void> }[] = [];
  after(async () => {
    for (const o of opened) await o.close();
  });

  it('the check itself catches a password in a field, a nested object and a getter-free copy', () => {
    for (const leak of [{ url: REDIS_URL }, { inner: { deep: [PASSWORD] } }, Object.defineProperty({}, 'hidden', { value: PASSWORD })]) {
      assert.throws(() => assertSecret(leak, [PASSWORD], 'self-test'), assert.AssertionError);
    }
  });

  describe('resolved settings', () => {
    const cases: [string, LockManagerOptions][] = [
      ['redis', { driver: 'redis', prefix: 'p', redisUrl: REDIS_URL }],
      ['postgres', { driver: 'sql', prefix: 'p', databaseUrl: PG_URL }],
      ['mysql', { driver: 'sql', prefix: 'p', databaseUrl: MYSQL_URL }],
    ];
    for (const [label, options] of cases) {
      it(`${label}: the URL's password is redacted, the rest of the URL is shown, and the setting still works`, () => {
        const config = resolveConfig(options, {});
        assertSecret(config, [PASSWORD], `${label} settings`);
        assert.match(inspect(config), new RegExp(`${USER}:\\*\\*\\*@127\\.0\\.0\\.1:1`));
        assert.equal(JSON.parse(JSON.stringify(config)).prefix, 'p');
        assert.equal(config.redisUrl ?? config.databaseUrl, options.redisUrl ?? options.databaseUrl, 'code still reads the real URL');
      });
    }

    it('a URL from the environment is redacted the same way; an unreadable one is hidden whole', () => {
      assertSecret(resolveConfig({}, { LOCKSTEP_REDIS_URL: REDIS_URL, LOCKSTEP_DATABASE_URL: PG_URL }), [PASSWORD], 'env settings');
      const unreadable = resolveConfig({ redisUrl: `redis://${USER}:${PASSWORD}@[::1/0` }, {});
      assertSecret(unreadable, [PASSWORD, USER], 'unreadable URL');
    });
  });

  describe('drivers built from a URL with a password, never connected', () => {
    const drivers: [string, () => Promise<Driver>][] = [
      ['redis', () => openDriver(resolveConfig({ driver: 'redis', prefix: 'p', redisUrl: REDIS_URL }, {}))],
      ['sql (postgres)', () => openDriver(resolveConfig({ driver: 'sql', prefix: 'p', databaseUrl: PG_URL }, {}))],
      ['sql (mysql)', () => openDriver(resolveConfig({ driver: 'sql', prefix: 'p', databaseUrl: MYSQL_URL }, {}))],
      [
        'git (https remote with credentials)',
        async () => createGitDriver({ gitDir: dir.path, gitRemote: GIT_URL, prefix: 'p', gitTimeoutMs: 1_000 }),
      ],
    ];
    // Each driver's client library loads once, here, so that a test's time is its own (the unit limit is 100 ms).
    before(async () => {
      for (const [, open] of drivers) opened.push(await open());
    });
    for (const [label, open] of drivers) {
      it(`${label}`, async () => {
        const driver = await open();
        opened.push(driver);
        assertSecret(driver, [PASSWORD], label);
      });
    }

    it('a manager on each of them, once its driver is decided', async () => {
      for (const options of [
        { driver: 'redis', redisUrl: REDIS_URL },
        { driver: 'sql', databaseUrl: PG_URL },
        { driver: 'sql', databaseUrl: MYSQL_URL },
      ] as const) {
        const manager = createLockManager({ ...options, prefix: 'p', env: {} });
        opened.push(manager);
        assert.equal(await manager.driverName(), options.driver);
        assertSecret(manager, [PASSWORD], `${options.driver} manager`);
      }
    });
  });

  describe('handles, and the drivers and managers that issued them', () => {
    const tokens: string[] = [];
    const secrets = () => [...tokens, ...tokens.map(hashToken)];
    const keep = (h: LockHandle) => {
      tokens.push(h.ownerToken());
      return h;
    };

    async function exercise(label: string, manager: LockManager, driver: Driver): Promise<void> {
      const held = keep(await manager.acquire('hygiene:held', { ttl: 60 }));
      const released = keep(await manager.acquire('hygiene:released', { ttl: 60 }));
      await released.release();
      const busy = await manager.acquire('hygiene:held');
      assert.equal(busy.acquired, false);
      for (const [what, value] of [
        ['held handle', held],
        ['released handle', released],
        ['busy handle', busy],
        ['manager', manager],
        ['driver', driver],
        ['settings', manager.config],
      ] as const) {
        assertSecret(value, secrets(), `${label} ${what}`);
      }
      assert.deepEqual(Object.keys(held).sort(), ['acquired', 'fencingToken'], 'a handle has no other enumerable field');
      assert.equal(held.ownerToken(), tokens.at(-2), 'ownerToken() is the one way to the token');
      await held.release();
    }

    it('memory', async () => {
      const driver = createMemoryDriver();
      await exercise('memory', createLockManager({ driverInstance: driver, clock: new ManualClock(), env: {} }), driver);
    });

    it('file', async () => {
      const root = path.join(dir.path, 'store');
      const driver = createFileDriver({ path: root, prefix: 'p' });
      opened.push(driver);
      await exercise('file', createLockManager({ driverInstance: driver, env: {}, path: root }), driver);
    });
  });
});
