import * as assert from 'node:assert/strict';
import * as os from 'node:os';
import * as path from 'node:path';
import { inspect } from 'node:util';
import { DEFAULT_PREFIX, resolveConfig } from '../../src/core/config';
import { LockConfigurationError } from '../../src/core/errors';
import { createLockManager } from '../../src/core/leases';

function configurationError(setting: string) {
  return (e: unknown) => {
    assert.ok(e instanceof LockConfigurationError, `expected LockConfigurationError, got ${String(e)}`);
    assert.equal(e.setting, setting);
    return true;
  };
}

describe('config: defaults and precedence', () => {
  it('defaults to the file driver, the default prefix and an absolute store path', () => {
    const config = resolveConfig({}, {});
    assert.equal(config.driver, 'file');
    assert.equal(config.prefix, DEFAULT_PREFIX);
    assert.equal(config.prefixExplicit, false);
    assert.ok(path.isAbsolute(config.path));
    assert.equal(config.requireDistributed, false);
  });

  it('takes options over defaults', () => {
    const config = resolveConfig(
      { driver: 'memory', prefix: 'team-a', path: '/srv/locks', redisUrl: 'redis://127.0.0.1:1', requireDistributed: false },
      {},
    );
    assert.deepEqual(
      [config.driver, config.prefix, config.prefixExplicit, config.path, config.redisUrl],
      ['memory', 'team-a', true, '/srv/locks', 'redis://127.0.0.1:1'],
    );
  });

  it('takes LOCKSTEP_* environment over options', () => {
    const config = resolveConfig(
      { driver: 'file', prefix: 'from-options', path: '/from/options', redisUrl: 'redis://options', requireDistributed: true },
      {
        LOCKSTEP_DRIVER: 'memory',
        LOCKSTEP_PREFIX: 'from-env',
        LOCKSTEP_PATH: '/from/env',
        LOCKSTEP_REDIS_URL: 'redis://env',
        LOCKSTEP_REQUIRE_DISTRIBUTED: 'false',
      },
    );
    assert.deepEqual(
      [config.driver, config.prefix, config.path, config.redisUrl, config.requireDistributed],
      ['memory', 'from-env', '/from/env', 'redis://env', false],
    );
  });

  it('reads an empty store URL variable as unset, as LOCKSTEP_GIT_REMOTE (a missing CI secret expands to an empty one)', () => {
    const env = { LOCKSTEP_REDIS_URL: '', LOCKSTEP_DATABASE_URL: '', LOCKSTEP_GIT_REMOTE: '' };
    const committed = resolveConfig(
      { redisUrl: 'redis://team:6379', databaseUrl: 'postgres://db/team', prefix: 'team', gitRemote: 'up' },
      env,
    );
    assert.deepEqual(
      [committed.redisUrl, committed.databaseUrl, committed.prefix, committed.gitRemote],
      ['redis://team:6379', 'postgres://db/team', 'team', 'up'],
    );
    const none = resolveConfig({}, env);
    assert.deepEqual([none.redisUrl, none.databaseUrl], [undefined, undefined]);
  });

  it('reads a store folder with trailing separators as the same folder, and leaves the root alone', () => {
    assert.equal(resolveConfig({ path: '/srv/locks' }, { LOCKSTEP_PATH: '/srv/locks//' }).path, '/srv/locks');
    assert.equal(resolveConfig({ path: '/srv/locks/' }, {}).path, '/srv/locks');
    assert.equal(resolveConfig({}, { LOCKSTEP_PATH: '/' }).path, '/');
  });

  it('the environment overrides options in a real manager too', async () => {
    const manager = createLockManager({ driver: 'file', env: { LOCKSTEP_DRIVER: 'memory' } });
    try {
      assert.equal(await manager.driverName(), 'memory');
    } finally {
      await manager.close();
    }
  });

  it('reads process.env when no env is given', async () => {
    const saved = process.env.LOCKSTEP_DRIVER;
    process.env.LOCKSTEP_DRIVER = 'memory';
    try {
      const manager = createLockManager({ driver: 'file' });
      assert.equal(await manager.driverName(), 'memory');
      await manager.close();
    } finally {
      if (saved === undefined) delete process.env.LOCKSTEP_DRIVER;
      else process.env.LOCKSTEP_DRIVER = saved;
    }
  });

  for (const [text, value] of [
    ['true', true],
    ['1', true],
    ['yes', true],
    ['false', false],
    ['0', false],
    ['', false],
  ] as const) {
    it(`reads LOCKSTEP_REQUIRE_DISTRIBUTED="${text}" as ${value}`, () => {
      assert.equal(resolveConfig({ driver: 'redis' }, { LOCKSTEP_REQUIRE_DISTRIBUTED: text }).requireDistributed, value);
    });
  }
});

describe('config: errors', () => {
  it('rejects an unknown driver in options', () => {
    assert.throws(() => resolveConfig({ driver: 'postgres' as never }, {}), configurationError('driver'));
  });

  it('rejects an unknown driver in the environment, naming LOCKSTEP_DRIVER and not echoing the value', () => {
    assert.throws(
      () => resolveConfig({}, { LOCKSTEP_DRIVER: 'Mystery-Backend-Value' }),
      (e: unknown) => {
        configurationError('LOCKSTEP_DRIVER')(e);
        assert.ok(!(e as Error).message.includes('Mystery-Backend-Value'));
        return true;
      },
    );
  });

  it('createLockManager rejects an unknown driver at once', () => {
    assert.throws(() => createLockManager({ env: { LOCKSTEP_DRIVER: 'array' } }), configurationError('LOCKSTEP_DRIVER'));
  });

  for (const relative of ['locks', './locks', '../locks', 'C:locks']) {
    it(`rejects the relative path "${relative}" (option and environment)`, () => {
      assert.throws(() => resolveConfig({ path: relative }, {}), configurationError('path'));
      assert.throws(() => resolveConfig({}, { LOCKSTEP_PATH: relative }), configurationError('LOCKSTEP_PATH'));
    });
  }

  for (const driver of ['memory', 'file', 'auto'] as const) {
    it(`requireDistributed rejects the ${driver} driver (option and environment)`, () => {
      assert.throws(() => resolveConfig({ driver, requireDistributed: true }, {}), configurationError('requireDistributed'));
      assert.throws(
        () => resolveConfig({}, { LOCKSTEP_DRIVER: driver, LOCKSTEP_REQUIRE_DISTRIBUTED: 'true' }),
        configurationError('requireDistributed'),
      );
    });
  }

  it('requireDistributed rejects the default driver (file)', () => {
    assert.throws(() => createLockManager({ requireDistributed: true, env: {} }), configurationError('requireDistributed'));
  });

  it('requireDistributed accepts the distributed driver names', () => {
    for (const driver of ['redis', 'sql', 'git'] as const) {
      assert.equal(resolveConfig({ driver, requireDistributed: true }, {}).driver, driver);
    }
  });

  it('rejects a LOCKSTEP_REQUIRE_DISTRIBUTED that is not a boolean', () => {
    assert.throws(() => resolveConfig({}, { LOCKSTEP_REQUIRE_DISTRIBUTED: 'maybe' }), configurationError('LOCKSTEP_REQUIRE_DISTRIBUTED'));
  });

  for (const prefix of ['a/b', 'a b', '-a', 'x'.repeat(201), 'caf\u00e9', 'a\0']) {
    it(`rejects the prefix ${JSON.stringify(prefix.slice(0, 12))}`, () => {
      assert.throws(() => resolveConfig({ prefix }, {}), configurationError('prefix'));
      assert.throws(() => resolveConfig({}, { LOCKSTEP_PREFIX: prefix }), configurationError('LOCKSTEP_PREFIX'));
    });
  }

  it('rejects non-positive backend timeouts', () => {
    assert.throws(() => resolveConfig({ connectTimeoutMs: 0 }, {}), configurationError('connectTimeoutMs'));
    assert.throws(() => resolveConfig({ commandTimeoutMs: -5 }, {}), configurationError('commandTimeoutMs'));
  });
});

describe('config: the default store', () => {
  it('the default store path lies under the home folder', () => {
    assert.ok(resolveConfig({}, {}).path.startsWith(os.homedir()));
  });

  it('is ~/.lockstep/store, as the README says', () => {
    assert.equal(resolveConfig({}, {}).path, path.join(os.homedir(), '.lockstep', 'store'));
  });
});

describe('config: the git driver settings', () => {
  it('names the remote origin unless told otherwise (LOCKSTEP_GIT_REMOTE, then the gitRemote option)', () => {
    assert.equal(resolveConfig({}, {}).gitRemote, 'origin');
    assert.equal(resolveConfig({ gitRemote: 'mirror' }, {}).gitRemote, 'mirror');
    assert.equal(resolveConfig({ gitRemote: 'mirror' }, { LOCKSTEP_GIT_REMOTE: 'upstream' }).gitRemote, 'upstream');
    assert.equal(resolveConfig({}, { LOCKSTEP_GIT_REMOTE: '' }).gitRemote, 'origin');
  });

  it('signs record commits when a key is configured (auto) unless gitSigning is required', () => {
    assert.equal(resolveConfig({}, {}).gitSigning, 'auto');
    assert.equal(resolveConfig({ gitSigning: 'auto' }, {}).gitSigning, 'auto');
    assert.equal(resolveConfig({ gitSigning: 'required' }, {}).gitSigning, 'required');
  });
});

describe('config: printed', () => {
  it('util.inspect names it ResolvedConfig and shows its settings', () => {
    const shown = inspect(resolveConfig({ driver: 'memory', prefix: 'team-a' }, {}));
    assert.match(shown, /^ResolvedConfig \{/);
    assert.match(shown, /driver: 'memory'/);
    assert.match(shown, /prefix: 'team-a'/);
  });
});
