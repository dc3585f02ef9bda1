import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { inspect } from 'node:util';
import { assertTtl, assertWait, parseSeconds, parseTtlSeconds } from '../../src/core/bounds';
import { ManualClock, SECOND } from '../../src/core/clock';
import { resolveConfig, type LockManagerOptions } from '../../src/core/config';
import {
  checkContainerFile,
  containerSettings,
  MAX_CONTAINER_FILE_BYTES,
  parseContainerFile,
} from '../../src/core/container/containerFile';
import { LockConfigurationError } from '../../src/core/errors';
import { createLockManager } from '../../src/core/leases';
import { acquire, emptyRecord, MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from '../../src/core/lockRecord';
import { assertValidName, assertValidPrefix } from '../../src/core/names';
import { createMemoryDriver } from '../../src/core/stores/memory';
import { parsePushers, parseSkewSeconds } from '../../src/cli/commands/hooks';
import { createGitDriver } from '../../src/core/stores/git/gitDriver';
import { POLL_SECONDS, settingsFrom } from '../../src/extension/settingValues';

/**
 * Every input surface's bounds (docs/inputs.md, issue #27), both sides of each edge, through the
 * real parsing or validation function: the accepted edge value comes back as it was given, and the
 * refused neighbour (just outside the edge, and malformed: a fraction, a negative, text, empty) is a
 * LockConfigurationError naming the setting, with the message's gist — never the value itself.
 * The exit codes of the command line are checked through the real CLI in
 * test/integration/inputSurfaceCli.test.ts.
 */

/** Asserts `fn` throws a LockConfigurationError for `setting` whose message matches `gist` and does not echo `input`. */
function refuses(fn: () => unknown, setting: string, gist: RegExp, input?: string): void {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  assert.ok(
    thrown instanceof LockConfigurationError,
    `expected a LockConfigurationError for ${setting}, got ${thrown === undefined ? 'no error' : String(thrown)}`,
  );
  assert.equal(thrown.setting, setting);
  assert.match(thrown.message, gist);
  if (input !== undefined && input.length > 3 && !/^\d+(\.\d+)?$/.test(input))
    assert.ok(!thrown.message.includes(input), 'the message echoes the input');
}

async function refusesAsync(promise: Promise<unknown>, setting: string, gist: RegExp): Promise<void> {
  const thrown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(thrown instanceof LockConfigurationError, `expected a LockConfigurationError for ${setting}, got ${String(thrown)}`);
  assert.equal(thrown.setting, setting);
  assert.match(thrown.message, gist);
}

/** A row of a table: accepted inputs with what they parse to, refused ones with the setting and the gist. */
interface Row<I> {
  readonly input: string;
  readonly parse: (value: I) => unknown;
  readonly accepted: readonly (readonly [I, unknown])[];
  readonly refused: readonly I[];
  readonly setting: string;
  readonly gist: RegExp;
  /** The message lists the allowed words, so a refused near-miss (" file", "true") may appear in it: no echo check. */
  readonly choices?: boolean;
}

/** A value as a test title shows it: short ones as JSON, long strings and lists by their length. */
function label(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value === 'string' && value.length > 24) return `${value.length} characters`;
  if (Array.isArray(value) && JSON.stringify(value).length > 40)
    return `${value.length} entries${value.length === 1 ? ` of ${String(value[0]).length} characters` : ''}`;
  return JSON.stringify(value);
}

function table<I>(rows: readonly Row<I>[]): void {
  for (const row of rows) {
    it(`${row.input}: accepts ${row.accepted.map(([v]) => label(v)).join(', ')}`, () => {
      for (const [value, expected] of row.accepted) assert.deepEqual(row.parse(value), expected, `${row.input} ${JSON.stringify(value)}`);
    });
    it(`${row.input}: refuses ${row.refused.map(label).join(', ')}`, () => {
      for (const value of row.refused)
        refuses(() => row.parse(value), row.setting, row.gist, typeof value === 'string' && !row.choices ? value : undefined);
    });
  }
}

const GRANT_TTL = { min: MIN_LEASE_TTL_MS / SECOND, max: MAX_LEASE_TTL_MS / SECOND };

describe('input surface: command-line flags parsed by shared functions', () => {
  table<string>([
    {
      input: 'acquire --ttl',
      parse: t => parseTtlSeconds(t, 'ttl', GRANT_TTL),
      setting: 'ttl',
      gist: /whole number of seconds from 60 to 86400/,
      accepted: [
        ['60', 60],
        ['86400', 86_400],
        [' 7200 ', 7200],
      ],
      refused: ['59', '86401', '0', '60.5', '59.9', '-60', 'abc', '', '6e1'],
    },
    {
      input: 'acquire --wait',
      parse: t => {
        const w = parseSeconds(t, 'wait');
        assertWait(w);
        return w;
      },
      setting: 'wait',
      gist: /number of seconds/,
      accepted: [
        ['0', 0],
        ['60', 60],
        ['0.5', 0.5],
      ],
      refused: ['60.001', '61', '-1', '-0.5', 'abc', '', '1e1'],
    },
    {
      input: 'run --ttl',
      parse: t => parseTtlSeconds(t),
      setting: 'ttl',
      gist: /whole number of seconds from 1 to 86400/,
      accepted: [
        ['1', 1],
        ['86400', 86_400],
      ],
      refused: ['0', '86401', '0.999', '1.5', '-1', 'abc', ''],
    },
    {
      input: "run --wait (parse; the 0–60 bound is the library's wait)",
      parse: t => parseSeconds(t, 'wait'),
      setting: 'wait',
      gist: /must be a number of seconds, e\.g\. 30/,
      accepted: [
        ['0', 0],
        ['60', 60],
        ['0.25', 0.25],
      ],
      refused: ['-1', 'abc', '', '.5', '1,5'],
    },
    {
      input: 'wait --timeout',
      parse: t => parseSeconds(t, 'timeout'),
      setting: 'timeout',
      gist: /timeout must be a number of seconds/,
      accepted: [
        ['0', 0],
        ['1.5', 1.5],
        ['864000', 864_000],
      ],
      refused: ['-1', 'abc', '', '1e3', 'Infinity'],
    },
    {
      input: 'heartbeat --every (parse; 1–86400 is checked in the command)',
      parse: t => parseSeconds(t, 'every'),
      setting: 'every',
      gist: /every must be a number of seconds/,
      accepted: [
        ['1', 1],
        ['86400', 86_400],
        ['1.5', 1.5],
      ],
      refused: ['-1', 'abc', '', '1s'],
    },
    {
      input: 'hooks install --server --skew',
      parse: t => parseSkewSeconds(t),
      setting: '--skew',
      gist: /whole number of seconds from 0 to 3600/,
      accepted: [
        ['0', 0],
        ['3600', 3600],
        ['120', 120],
      ],
      refused: ['3601', '-1', '1.5', 'abc', '', ' 5'],
    },
  ]);

  it('hooks install --server --pusher-variable V --pusher USER=ID: the four variables, pairs with both sides; anything else is a usage error naming the flag', () => {
    for (const variable of ['REMOTE_USER', 'GL_USERNAME', 'GL_USER', 'GITEA_PUSHER_EMAIL']) {
      assert.deepEqual(parsePushers(variable, ['alice=alice@example.com', 'b=b=c']), {
        pushers: { variable, identities: { alice: 'alice@example.com', b: 'b=c' } },
      });
    }
    assert.deepEqual(parsePushers(undefined, []), {});
    for (const variable of ['USER', 'remote_user', ''])
      refuses(
        () => parsePushers(variable, []),
        '--pusher-variable',
        /--pusher-variable must be one of REMOTE_USER, GL_USERNAME, GL_USER, GITEA_PUSHER_EMAIL/,
      );
    refuses(() => parsePushers(undefined, ['alice=alice@example.com']), '--pusher', /--pusher needs --pusher-variable/);
    for (const pair of ['=alice@example.com', 'alice=', 'alice', ''])
      refuses(() => parsePushers('REMOTE_USER', [pair]), '--pusher', /--pusher takes USER=IDENTITY/);
  });
});

describe('input surface: LOCKSTEP_* environment variables (resolveConfig with an env object)', () => {
  const abs = path.resolve('/tmp/lockstep-input-surface');
  const env = (vars: Record<string, string>, options: LockManagerOptions = {}) => resolveConfig(options, vars);
  table<string>([
    {
      input: 'LOCKSTEP_DRIVER',
      choices: true,
      parse: v => env({ LOCKSTEP_DRIVER: v }).driver,
      setting: 'LOCKSTEP_DRIVER',
      gist: /driver must be one of memory, file, sql, redis, etcd, git, auto/,
      accepted: [
        ['memory', 'memory'],
        ['file', 'file'],
        ['sql', 'sql'],
        ['redis', 'redis'],
        ['etcd', 'etcd'],
        ['git', 'git'],
        ['auto', 'auto'],
        ['', 'file'],
      ],
      refused: ['bogus', 'FILE', ' file', 'postgres'],
    },
    {
      input: 'LOCKSTEP_PREFIX',
      parse: v => env({ LOCKSTEP_PREFIX: v }).prefix,
      setting: 'LOCKSTEP_PREFIX',
      gist: /at most 200 characters from A-Z a-z 0-9 : \. _ -/,
      accepted: [
        ['', ''],
        ['a', 'a'],
        ['p'.repeat(200), 'p'.repeat(200)],
        ['team:a.b_c-1', 'team:a.b_c-1'],
      ],
      refused: ['p'.repeat(201), '-p', 'a b', 'a/b', '.a', 'é'],
    },
    {
      input: 'LOCKSTEP_PATH',
      parse: v => env({ LOCKSTEP_PATH: v }).path,
      setting: 'LOCKSTEP_PATH',
      gist: /storage path must be absolute/,
      accepted: [[abs, abs]],
      refused: ['relative/store', './store', 'store'],
    },
    {
      input: 'LOCKSTEP_REQUIRE_DISTRIBUTED',
      parse: v => env({ LOCKSTEP_DRIVER: 'redis', LOCKSTEP_REQUIRE_DISTRIBUTED: v }).requireDistributed,
      setting: 'LOCKSTEP_REQUIRE_DISTRIBUTED',
      gist: /must be true or false/,
      accepted: [
        ['true', true],
        ['1', true],
        ['yes', true],
        ['on', true],
        ['false', false],
        ['0', false],
        ['no', false],
        ['off', false],
        ['', false],
        [' ON ', true],
        ['\tYes\n', true],
        [' off ', false],
      ],
      refused: ['maybe', '2', 'tru', 'true!', 'o n'],
    },
    {
      input: 'LOCKSTEP_REQUIRE_DISTRIBUTED with a one-machine driver',
      choices: true,
      parse: v => env({ LOCKSTEP_DRIVER: v, LOCKSTEP_REQUIRE_DISTRIBUTED: 'true' }).driver,
      setting: 'requireDistributed',
      gist: /coordinates only one machine; choose redis, etcd, sql/,
      accepted: [
        ['redis', 'redis'],
        ['etcd', 'etcd'],
        ['sql', 'sql'],
        ['git', 'git'],
      ],
      refused: ['memory', 'file', 'auto'],
    },
    {
      input: 'LOCKSTEP_REDIS_MIN_REPLICAS',
      parse: v => env({ LOCKSTEP_REDIS_MIN_REPLICAS: v }).redisMinReplicas,
      setting: 'LOCKSTEP_REDIS_MIN_REPLICAS',
      gist: /whole number of replicas from 0 to 100/,
      accepted: [
        ['0', 0],
        ['100', 100],
        [' 2 ', 2],
        ['', undefined],
      ],
      // Digits only: Number() alone would read a hexadecimal, an exponent or a point.
      refused: ['101', '-1', '1.5', 'two', '0x1', '1e1', '2.0', 'x1', '1x'],
    },
    {
      input: 'LOCKSTEP_GIT_TIMEOUT_SECONDS',
      parse: v => env({ LOCKSTEP_GIT_TIMEOUT_SECONDS: v }).gitTimeoutMs,
      setting: 'LOCKSTEP_GIT_TIMEOUT_SECONDS',
      gist: /whole number of seconds from 1 to 600/,
      accepted: [
        ['1', 1000],
        ['600', 600_000],
        ['', 5000],
      ],
      refused: ['0', '601', '1.5', '-1', 'ten', '0x10', '1e2', '10.0', 'x10', '10x'],
    },
  ]);

  it('LOCKSTEP_REDIS_URL, LOCKSTEP_DATABASE_URL and LOCKSTEP_ETCD_ENDPOINTS: any URL, a password included (the environment carries credentials); never printed', () => {
    const config = env({
      LOCKSTEP_REDIS_URL: 'redis://:s3cret@h:6379',
      LOCKSTEP_DATABASE_URL: 'postgres://u:s3cret@h/db',
      LOCKSTEP_ETCD_ENDPOINTS: 'http://u:s3cret@h:2379,http://u:s3cret@g:2379',
    });
    assert.equal(config.redisUrl, 'redis://:s3cret@h:6379');
    assert.equal(config.databaseUrl, 'postgres://u:s3cret@h/db');
    assert.equal(config.etcdEndpoints, 'http://u:s3cret@h:2379,http://u:s3cret@g:2379');
    assert.ok(!JSON.stringify(config).includes('s3cret'));
    assert.ok(!inspect(config).includes('s3cret'));
  });

  it('LOCKSTEP_GIT_REMOTE: any name, path or URL here; empty falls back to the option (the git driver refuses one starting with -)', () => {
    assert.equal(env({ LOCKSTEP_GIT_REMOTE: 'upstream' }).gitRemote, 'upstream');
    assert.equal(env({ LOCKSTEP_GIT_REMOTE: '' }, { gitRemote: 'mirror' }).gitRemote, 'mirror');
  });

  it('LOCKSTEP_GIT_REMOTE and the gitDir option at the git driver: a name, path or URL and an absolute clone are taken (nothing runs); -x, empty and a relative gitDir are refused', () => {
    const config = (gitRemote: string, gitDir = abs) => ({
      ...env({ LOCKSTEP_DRIVER: 'git', LOCKSTEP_GIT_REMOTE: gitRemote }, { gitDir }),
      gitRemote,
    });
    for (const remote of ['origin', '../shared.git', 'https://example.com/r.git'])
      assert.equal(createGitDriver(config(remote)).name, 'git');
    for (const remote of ['-x', '--upload-pack=evil', ''])
      refuses(() => createGitDriver(config(remote)), 'gitRemote', /gitRemote must be a remote name of the clone, a path or a URL/);
    refuses(() => createGitDriver(config('origin', 'relative/clone')), 'gitDir', /needs gitDir: the absolute path of a local clone/);
  });
});

describe('input surface: library options (LockManagerOptions, acquire, extend, names)', () => {
  table<unknown>([
    {
      input: 'LockManagerOptions.prefix',
      parse: v => resolveConfig({ prefix: v as string }, {}).prefix,
      setting: 'prefix',
      gist: /prefix must be at most 200 characters/,
      accepted: [
        ['', ''],
        ['q'.repeat(200), 'q'.repeat(200)],
      ],
      refused: ['q'.repeat(201), '-q', 'a b', 7],
    },
    {
      input: 'LockManagerOptions.driver',
      parse: v => resolveConfig({ driver: v as never }, {}).driver,
      setting: 'driver',
      gist: /driver must be one of/,
      accepted: [
        ['memory', 'memory'],
        ['auto', 'auto'],
      ],
      refused: ['bogus', 'Redis'],
    },
    {
      input: 'LockManagerOptions.path',
      parse: v => resolveConfig({ path: v as string }, {}).path,
      setting: 'path',
      gist: /storage path must be absolute/,
      accepted: [['/srv/locks', '/srv/locks']],
      refused: ['srv/locks', ''],
    },
    {
      input: 'LockManagerOptions.requireDistributed',
      choices: true,
      parse: v => resolveConfig({ driver: v as never, requireDistributed: true }, {}).requireDistributed,
      setting: 'requireDistributed',
      gist: /coordinates only one machine/,
      accepted: [
        ['redis', true],
        ['git', true],
      ],
      refused: ['file', 'memory', 'auto'],
    },
    {
      input: 'LockManagerOptions.redisMinReplicas',
      parse: v => resolveConfig({ redisMinReplicas: v as number }, {}).redisMinReplicas,
      setting: 'redisMinReplicas',
      gist: /whole number of replicas from 0 to 100/,
      accepted: [
        [0, 0],
        [100, 100],
      ],
      refused: [101, -1, 1.5, Number.NaN],
    },
    ...(['connectTimeoutMs', 'commandTimeoutMs', 'gitTimeoutMs'] as const).map(
      (key): Row<unknown> => ({
        input: `LockManagerOptions.${key}`,
        parse: v => resolveConfig({ [key]: v }, {})[key],
        setting: key,
        gist: /must be a positive number of milliseconds/,
        accepted: [
          [1, 1],
          [0.5, 0.5],
          [600_000, 600_000],
        ],
        refused: [0, -1, Number.NaN, Number.POSITIVE_INFINITY],
      }),
    ),
    {
      input: 'lock name (acquire, run)',
      parse: v => {
        assertValidName(v);
        return v;
      },
      setting: 'name',
      gist: /lock name/,
      accepted: [
        ['a', 'a'],
        ['n'.repeat(200), 'n'.repeat(200)],
        ['invoice:123', 'invoice:123'],
      ],
      refused: ['', 'n'.repeat(201), '-a', 'a b', 'a/b', 'a*', 'é', 42],
    },
    {
      input: 'prefix rule (assertValidPrefix)',
      parse: v => {
        assertValidPrefix(v);
        return v;
      },
      setting: 'prefix',
      gist: /at most 200 characters/,
      accepted: [
        ['', ''],
        ['r'.repeat(200), 'r'.repeat(200)],
      ],
      refused: ['r'.repeat(201), '_r', null],
    },
    {
      input: 'acquire({ ttl }) / extend(ttl)',
      parse: v => {
        assertTtl(v);
        return v;
      },
      setting: 'ttl',
      gist: /number of seconds from 1 to 86400/,
      accepted: [
        [1, 1],
        [86_400, 86_400],
        [1.5, 1.5],
      ],
      refused: [0.999, 86_400.001, 0, -1, Number.NaN, Number.POSITIVE_INFINITY, '30'],
    },
    {
      input: 'acquire({ wait })',
      parse: v => {
        assertWait(v);
        return v;
      },
      setting: 'wait',
      gist: /number of seconds from 0 to 60/,
      accepted: [
        [0, 0],
        [60, 60],
        [0.5, 0.5],
      ],
      refused: [60.001, -0.001, -1, Number.NaN, '5'],
    },
  ]);

  it('LockManager.acquire applies the name, ttl and wait bounds before the backend (memory driver): both edges granted, neighbours refused', async () => {
    const manager = createLockManager({ driverInstance: createMemoryDriver(), clock: new ManualClock(), env: {} });
    for (const [name, ttl, wait] of [
      ['a', 1, 0],
      ['n'.repeat(200), 86_400, 60],
    ] as const) {
      const handle = await manager.acquire(name, { ttl, wait });
      assert.equal(handle.acquired, true, `${name.length}-character name, ttl ${ttl}, wait ${wait}`);
      await handle.release();
    }
    await refusesAsync(manager.acquire('n'.repeat(201)), 'name', /limit is 200/);
    await refusesAsync(manager.acquire('a', { ttl: 86_401 }), 'ttl', /from 1 to 86400/);
    await refusesAsync(manager.acquire('a', { ttl: 0.5 }), 'ttl', /from 1 to 86400/);
    await refusesAsync(manager.acquire('a', { wait: 60.5 }), 'wait', /from 0 to 60/);
    await refusesAsync(manager.acquire('a', { wait: -1 }), 'wait', /from 0 to 60/);
    const handle = await manager.acquire('a', { ttl: 30 });
    assert.equal(await handle.extend(86_400), true);
    await assert.rejects(handle.extend(86_401), LockConfigurationError);
    await handle.release();
  });
});

describe('input surface: .lockstep.json keys (checkContainerFile, the published schema)', () => {
  const base = {
    container: '0f8fad5b-d9cb-469f-a165-70867728950e',
    driver: 'file',
    path: '/srv/lockstep',
    protectedBranches: ['main'],
    remote: 'origin',
    leaseTtlSeconds: 7200,
    heartbeatSeconds: 600,
    windowSeconds: 900,
    operators: ['op@example.com'],
    serverGuard: false,
  };
  /** The file with `key` set to the value (undefined: left out), checked; the key's value as read. */
  const withKey =
    (key: string, extra: Record<string, unknown> = {}) =>
    (value: unknown) =>
      (checkContainerFile(JSON.parse(JSON.stringify({ ...base, ...extra, [key]: value }))) as unknown as Record<string, unknown>)[key];
  const same = (...values: unknown[]) => values.map(v => [v, v] as const);
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `p${i}@example.com`);
  const branches = (n: number) => Array.from({ length: n }, (_, i) => `release/${i}`);

  table<unknown>([
    {
      input: '$schema',
      parse: withKey('$schema'),
      setting: '$schema',
      gist: /must be the address of this schema/,
      accepted: same('https://example.com/lockstep.schema.json', 's'.repeat(2048)),
      refused: ['s'.repeat(2049), 7],
    },
    {
      input: 'container',
      parse: withKey('container'),
      setting: 'container',
      gist: /version 4 UUID in lower case/,
      accepted: same(base.container),
      refused: [base.container.toUpperCase(), '0f8fad5b-d9cb-169f-a165-70867728950e', '', 12],
    },
    {
      input: 'driver',
      choices: true,
      parse: withKey('driver'),
      setting: 'driver',
      gist: /driver/,
      accepted: same('file', 'sql', 'redis', 'git', 'memory'),
      refused: ['auto', 'bogus', 'File', ''],
    },
    {
      input: 'prefix',
      parse: withKey('prefix'),
      setting: 'prefix',
      gist: /at most 200 characters/,
      accepted: same('', 'x'.repeat(200)),
      refused: ['x'.repeat(201), '-x', 'a b', 1],
    },
    {
      input: 'path',
      parse: withKey('path'),
      setting: 'path',
      gist: /absolute path \(at most 4096 characters, no control characters\)/,
      accepted: same('/srv/lockstep', `/${'d'.repeat(4095)}`, 'C:\\locks'),
      refused: [`/${'d'.repeat(4096)}`, 'relative/store', '/a\nb', ''],
    },
    {
      input: 'redisUrl',
      parse: withKey('redisUrl', { driver: 'redis' }),
      setting: 'redisUrl',
      gist: /without a password/,
      accepted: same('redis://h:6379', 'redis://user@h:6379', 'rediss://h', 'redis-sentinel://h:26379', 'redis-cluster://h:7000'),
      refused: ['redis://:pw@h:6379', 'redis://user:pw@h:6379', 'http://h', `redis://${'h'.repeat(2041)}`, 'redis://h /x'],
    },
    {
      input: 'databaseUrl',
      parse: withKey('databaseUrl', { driver: 'sql' }),
      setting: 'databaseUrl',
      gist: /without a password/,
      accepted: same('postgres://u@h/db', 'mysql://h/db', 'sqlite:///srv/locks.db', 'mariadb://u@h/db', 'postgresql://h/db'),
      refused: ['postgres://u:pw@h/db', 'mysql://:pw@h/db', 'http://h/db', 'oracle://h'],
    },
    {
      input: 'etcdEndpoints',
      parse: withKey('etcdEndpoints', { driver: 'etcd' }),
      setting: 'etcdEndpoints',
      gist: /without a user or password/,
      accepted: same('http://h:2379', 'https://a:2379,https://b:2379', 'http://10.0.0.1:2379,http://10.0.0.2:2379'),
      refused: ['http://u:pw@h:2379', 'http://u@h:2379', 'redis://h', `http://${'h'.repeat(2042)}`, 'http://h /x'],
    },
    {
      input: 'gitRemote',
      parse: withKey('gitRemote', { driver: 'git' }),
      setting: 'gitRemote',
      gist: /name of a remote of the clone/,
      accepted: same('origin', 'r'.repeat(100), 'my.remote_1-x'),
      refused: ['r'.repeat(101), '-x', '../repo', 'https://h/r.git', ''],
    },
    {
      input: 'gitTimeoutSeconds',
      parse: withKey('gitTimeoutSeconds', { driver: 'git' }),
      setting: 'gitTimeoutSeconds',
      gist: /whole number of seconds from 1 to 600/,
      accepted: same(1, 600),
      refused: [0, 601, 1.5, -1, '30'],
    },
    {
      input: 'allowedSigners',
      parse: withKey('allowedSigners', { driver: 'git' }),
      setting: 'allowedSigners',
      gist: /path inside the repository/,
      accepted: same('.lockstep/allowed_signers', 'a'.repeat(200)),
      refused: ['a'.repeat(201), '../signers', '/etc/signers', 'a//b', 'a/', ''],
    },
    {
      input: 'allowedSigners with a driver that keeps no signed history',
      choices: true,
      parse: withKey('driver', { allowedSigners: '.lockstep/allowed_signers' }),
      setting: 'allowedSigners',
      gist: /read by the git, file, SQL, Redis and etcd drivers/,
      accepted: same('git', 'file', 'redis', 'etcd', 'sql'),
      refused: ['memory'],
    },
    {
      input: 'protectedBranches',
      parse: withKey('protectedBranches'),
      setting: 'protectedBranches',
      gist: /branch/,
      accepted: same(['main'], branches(100), ['b'.repeat(200)]),
      refused: [[], branches(101), ['main', 'main'], ['-main'], ['a..b'], ['main.lock'], ['b'.repeat(201)], 'main'],
    },
    {
      input: 'remote',
      parse: withKey('remote'),
      setting: 'remote',
      gist: /name of a remote of the clone/,
      accepted: same('origin', 'r'.repeat(100)),
      refused: ['r'.repeat(101), '-o', '/srv/repo.git', ''],
    },
    {
      input: 'leaseTtlSeconds',
      parse: withKey('leaseTtlSeconds', { heartbeatSeconds: 30 }),
      setting: 'leaseTtlSeconds',
      gist: /number of seconds from 60 to 86400/,
      accepted: same(60, 86_400, 90.5),
      refused: [59, 86_401, 59.999, 0, -60, '7200'],
    },
    {
      input: 'heartbeatSeconds (leaseTtlSeconds 7200)',
      parse: withKey('heartbeatSeconds'),
      setting: 'heartbeatSeconds',
      gist: /from 5 to (3600 \(half of leaseTtlSeconds\)|half of leaseTtlSeconds)/,
      accepted: same(5, 3600, 5.5),
      refused: [4, 4.999, 3601, 43_201, -5, '600'],
    },
    {
      input: 'windowSeconds',
      parse: withKey('windowSeconds'),
      setting: 'windowSeconds',
      gist: /number of seconds from 1 to 86400/,
      accepted: same(1, 86_400),
      refused: [0, 86_401, 0.5, -1, '900'],
    },
    {
      input: 'operators',
      parse: withKey('operators'),
      setting: 'operators',
      gist: /identity|operators/,
      accepted: same([], ids(100), [`${'o'.repeat(188)}@example.com`]),
      refused: [
        ids(101),
        ['a@x', 'a@x'],
        [''],
        ['-a@x'],
        [' a@x'],
        ['a\u0000b'],
        ['a\u202eb'],
        [`${'o'.repeat(189)}@example.com`],
        'op@example.com',
      ],
    },
    {
      input: 'pushers',
      parse: withKey('pushers'),
      setting: 'pushers',
      gist: /forge login to an identity|pushers/,
      accepted: same({}, { alice: 'alice@example.com' }, { alice: `${'a'.repeat(188)}@example.com` }),
      refused: [{ alice: '' }, { alice: '-a' }, { alice: 7 }, ['alice'], { alice: `${'a'.repeat(189)}@example.com` }],
    },
    {
      input: 'serverGuard',
      choices: true,
      parse: withKey('serverGuard'),
      setting: 'serverGuard',
      gist: /true or false/,
      accepted: same(true, false),
      refused: ['true', 1, null],
    },
  ]);

  it('leaseTtlSeconds: every accepted value, a fraction of a millisecond too (60.0001, 86399.9999), makes a lease the page grants', () => {
    for (const leaseTtlSeconds of [60, 60.0001, 90.5, 1.005 * 100, 86_399.9999, 86_400]) {
      const settings = containerSettings(checkContainerFile({ ...base, leaseTtlSeconds, heartbeatSeconds: 30 }));
      const granted = acquire(
        emptyRecord(base.container),
        settings,
        { identity: 'lead@example.com', tokenHash: 'a'.repeat(64), proofHash: 'b'.repeat(64) },
        1_000_000,
      );
      assert.ok(granted.ok, `leaseTtlSeconds ${leaseTtlSeconds}: ${granted.ok ? '' : granted.error.message}`);
      assert.equal(granted.value.expiresAt - 1_000_000, Math.round(leaseTtlSeconds * 1000));
    }
  });

  it('an unknown or misspelt key is refused, naming the key meant; a missing required key is refused naming it', () => {
    refuses(
      () => checkContainerFile({ ...base, leaseTTLSeconds: 60 }),
      'leaseTtlSeconds',
      /"leaseTTLSeconds" is not a setting Lockstep knows \(did you mean leaseTtlSeconds\?\)/,
    );
    refuses(() => checkContainerFile({ ...base, shinyNewKey: 1 }), '.lockstep.json', /is not a setting Lockstep knows/);
    const { container: _container, ...noContainer } = base;
    refuses(() => checkContainerFile(noContainer), 'container', /container is missing/);
    const { protectedBranches: _branches, ...noBranches } = base;
    refuses(() => checkContainerFile(noBranches), 'protectedBranches', /protectedBranches is missing/);
  });

  it(`the file: a JSON object of at most ${MAX_CONTAINER_FILE_BYTES / 1024} KiB; larger, not JSON or not an object is refused`, () => {
    const text = JSON.stringify(base);
    const padded = `${text.slice(0, -1) + ' '.repeat(MAX_CONTAINER_FILE_BYTES - text.length)}}`;
    assert.equal(padded.length, MAX_CONTAINER_FILE_BYTES);
    assert.equal(parseContainerFile(padded).container, base.container);
    refuses(() => parseContainerFile(`${padded} `), '.lockstep.json', /larger than 64 KiB/);
    refuses(() => parseContainerFile('{"container":'), '.lockstep.json', /not valid JSON/);
    refuses(() => parseContainerFile('[]'), '.lockstep.json', /must hold a JSON object/);
    refuses(() => parseContainerFile(''), '.lockstep.json', /not valid JSON/);
  });
});

describe('input surface: VS Code settings (settingsFrom, package.json contributes.configuration)', () => {
  const read = (values: Record<string, unknown>) => settingsFrom(key => values[key]);
  const contributed = (
    JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      contributes: {
        configuration: { properties: Record<string, { minimum?: number; maximum?: number; default?: unknown; enum?: string[] }> };
      };
    }
  ).contributes.configuration.properties;

  it('lockstep.pollSeconds: 1 and 600 are kept; below 1 is 1, above 600 is 600, not a number is the default 10 — the bounds package.json publishes', () => {
    const p = contributed['lockstep.pollSeconds'];
    assert.deepEqual([p.minimum, p.maximum, p.default], [POLL_SECONDS.min, POLL_SECONDS.max, POLL_SECONDS.default]);
    for (const [value, expected] of [
      [1, 1],
      [600, 600],
      [2.5, 2.5],
      [0.999, 1],
      [0, 1],
      [-5, 1],
      [601, 600],
      [86_400, 600],
      ['30', 10],
      [Number.NaN, 10],
      [undefined, 10],
      [null, 10],
    ] as const) {
      assert.equal(read({ pollSeconds: value }).pollSeconds, expected, `pollSeconds ${String(value)}`);
    }
  });

  it("lockstep.logLevel: each of package.json's levels is kept; any other value is info", () => {
    const levels = contributed['lockstep.logLevel'].enum!;
    assert.deepEqual(levels, ['error', 'warn', 'info', 'debug', 'trace']);
    for (const level of levels) assert.equal(read({ logLevel: level }).logLevel, level);
    for (const value of ['verbose', 'INFO', '', 3, undefined])
      assert.equal(read({ logLevel: value }).logLevel, 'info', `logLevel ${String(value)}`);
  });

  it('lockstep.acquireOnEdit, showBadge, notifyPetitions: true and false are kept; anything else (the string "false" too) is the default true', () => {
    for (const key of ['acquireOnEdit', 'showBadge', 'notifyPetitions'] as const) {
      assert.equal(contributed[`lockstep.${key}`].default, true);
      assert.equal(read({ [key]: true })[key], true);
      assert.equal(read({ [key]: false })[key], false);
      for (const value of ['false', 0, null, undefined]) assert.equal(read({ [key]: value })[key], true, `${key} ${String(value)}`);
    }
  });

  it('lockstep.whileLockedByOthers: warn and readOnly are kept; any other value is warn', () => {
    assert.deepEqual(contributed['lockstep.whileLockedByOthers'].enum, ['warn', 'readOnly']);
    assert.equal(read({ whileLockedByOthers: 'readOnly' }).whileLockedByOthers, 'readOnly');
    assert.equal(read({ whileLockedByOthers: 'warn' }).whileLockedByOthers, 'warn');
    for (const value of ['readonly', 'block', true, undefined])
      assert.equal(read({ whileLockedByOthers: value }).whileLockedByOthers, 'warn');
  });

  it('lockstep.readOnlyExclude: a list of non-empty globs is kept; other entries are dropped, and a value that is not a list is none', () => {
    assert.deepEqual(read({ readOnlyExclude: ['docs/**', '*.md'] }).readOnlyExclude, ['docs/**', '*.md']);
    assert.deepEqual(read({ readOnlyExclude: ['docs/**', '', '  ', 7, null] }).readOnlyExclude, ['docs/**']);
    for (const value of ['docs/**', { a: 1 }, 3, undefined]) assert.deepEqual(read({ readOnlyExclude: value }).readOnlyExclude, []);
  });

  it("lockstep.identity: trimmed; empty or not text is unset (git config user.email); its bounds are the lock record's identity rule", () => {
    assert.equal(read({ identity: ' ana@example.com ' }).identity, 'ana@example.com');
    for (const value of ['', '   ', 7, undefined]) assert.equal(read({ identity: value }).identity, undefined);
  });

  it("lockstep.store.path: an absolute folder is the file driver's path; empty is unset; a relative one is refused by resolveConfig (setting path)", () => {
    assert.deepEqual(read({ 'store.path': ' /srv/locks ' }).store, { path: '/srv/locks' });
    assert.deepEqual(read({ 'store.path': '' }).store, {});
    assert.deepEqual(read({ 'store.path': 5 }).store, {});
    refuses(() => resolveConfig(read({ 'store.path': 'relative/locks' }).store, {}), 'path', /storage path must be absolute/);
  });
});
