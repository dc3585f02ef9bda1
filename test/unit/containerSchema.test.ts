import { MAX_IDENTITY_LENGTH } from '../../src/core/lockRecord';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv from 'ajv';
import schema from '../../schemas/lockstep.schema.json';
import { MAX_GIT_TIMEOUT_SECONDS } from '../../src/core/config';
import { checkContainerFile, MAX_CONTAINER_FILE_BYTES, parseContainerFile } from '../../src/core/container/containerFile';
import { LockConfigurationError } from '../../src/core/errors';
import { newServerSettings, parseServerSettings } from '../../src/core/guard/serverSettings';
import { assertSupportedSchema, checkAgainstSchema, type SchemaNode } from '../../src/core/jsonSchemaCheck';
import { MAX_HOLD_MS } from '../../src/core/lockRecord';
import { MAX_PREFIX_BYTES } from '../../src/core/names';

/**
 * `.lockstep.json`'s strict schema (issue #24): every rule, both sides. The same cases run through
 * Lockstep's reader and through ajv on the published schema (what the editor checks), so the two
 * cannot disagree; the one rule JSON Schema cannot say (heartbeat within half the lease) is marked.
 */

const CONTAINER = '0b7c9c3e-5d4f-4a8b-9c1d-2e3f4a5b6c7d';
const base = { container: CONTAINER, protectedBranches: ['main'] };
const ajv = new Ajv({ strict: false, allErrors: false });
const published = ajv.compile(schema);

type Case = readonly [label: string, settings: Record<string, unknown>, refusedSetting?: string, runtimeOnly?: 'runtime only'];

const ACCEPTED: readonly Case[] = [
  ['the two required settings alone', {}],
  [
    'everything init writes (file driver)',
    {
      driver: 'file',
      prefix: 'lockstep',
      path: '/srv/locks',
      remote: 'origin',
      leaseTtlSeconds: 7200,
      heartbeatSeconds: 600,
      windowSeconds: 900,
      operators: ['alice@example.com'],
      serverGuard: false,
    },
  ],
  ['redis without credentials', { driver: 'redis', redisUrl: 'redis://cache:6379/0' }],
  ['redis Sentinel and Cluster', { driver: 'redis', redisUrl: 'redis-sentinel://h1:1,h2:2/master?db=1' }],
  ['a database URL without credentials', { driver: 'sql', databaseUrl: 'postgres://db.example.com:5432/locks' }],
  ['a user name without a password', { driver: 'sql', databaseUrl: 'mysql://app@db:3306/locks' }],
  ['SQLite', { driver: 'sql', databaseUrl: 'sqlite:///var/lib/locks.db' }],
  ['the git driver with a remote name', { driver: 'git', gitRemote: 'upstream', gitTimeoutSeconds: 600 }],
  ['remote names with dots, dashes and underscores inside', { remote: 'my.remote_2-x', gitRemote: 'a' }],
  ['branch names with slashes and dots', { protectedBranches: ['main', 'release/1.x', 'hot_fix/v2.0-rc'] }],
  ['an empty prefix', { prefix: '' }],
  ['the edges of every bound', { leaseTtlSeconds: 60, heartbeatSeconds: 5, windowSeconds: 1, gitTimeoutSeconds: 1 }],
  ['the upper edges', { leaseTtlSeconds: 86_400, heartbeatSeconds: 43_200, windowSeconds: 86_400 }],
  ["an editor's $schema key", { $schema: './node_modules/lockstep/schemas/lockstep.schema.json' }],
  ['identities with spaces inside', { operators: ['Alice Smith <alice@example.com>'] }],
  ['a Windows path', { path: 'C:\\locks' }],
  ['a signed page (git driver) with its allowed signers file', { driver: 'git', allowedSigners: '.lockstep/allowed_signers' }],
  ['a signed page (file driver) with its allowed signers file', { driver: 'file', allowedSigners: '.lockstep/allowed_signers' }],
];

const REFUSED: readonly Case[] = [
  ['a misspelt key (protectedBranch): it turned the fence off', { protectedBranch: ['main'] }, 'protectedBranches'],
  ['a key in the wrong case', { ServerGuard: true }, 'serverGuard'],
  ['an unknown key', { color: 'red' }, '.lockstep.json'],
  ['no container', { container: undefined }, 'container'],
  ['no protectedBranches', { protectedBranches: undefined }, 'protectedBranches'],
  ['no protected branch at all', { protectedBranches: [] }, 'protectedBranches'],
  ['a container that is no UUID v4', { container: 'demo' }, 'container'],
  ['a UUID in upper case', { container: CONTAINER.toUpperCase() }, 'container'],
  ['an unknown driver', { driver: 'postgres' }, 'driver'],
  ['driver auto', { driver: 'auto' }, 'driver'],
  ['a driver of the wrong type', { driver: 1 }, 'driver'],
  ['remote as a path', { remote: 'tools/cache.git' }, 'remote'],
  ['remote as a URL', { remote: 'https://example.com/x.git' }, 'remote'],
  ['remote as an option (--upload-pack)', { remote: '--upload-pack=touch pwned' }, 'remote'],
  ['remote as -x', { remote: '-x' }, 'remote'],
  ['remote . (this repository)', { remote: '.' }, 'remote'],
  ['remote ..', { remote: '..' }, 'remote'],
  ['remote empty', { remote: '' }, 'remote'],
  ['remote of the wrong type', { remote: ['origin'] }, 'remote'],
  ['gitRemote as a path inside the work tree', { gitRemote: 'tools/cache.git' }, 'gitRemote'],
  ['gitRemote as a URL', { gitRemote: 'file:///tmp/x.git' }, 'gitRemote'],
  ['gitRemote as an option', { gitRemote: '--receive-pack=sh' }, 'gitRemote'],
  ['gitRemote past 100 characters', { gitRemote: 'a'.repeat(101) }, 'gitRemote'],
  ['a branch as an option', { protectedBranches: ['main', '-f'] }, 'protectedBranches'],
  ['a branch with ..', { protectedBranches: ['a..b'] }, 'protectedBranches'],
  ['a branch ending in .lock', { protectedBranches: ['main.lock'] }, 'protectedBranches'],
  ['a branch with a component starting with a dot', { protectedBranches: ['a/.b'] }, 'protectedBranches'],
  ['a branch ending in /', { protectedBranches: ['main/'] }, 'protectedBranches'],
  ['a branch with //', { protectedBranches: ['a//b'] }, 'protectedBranches'],
  ['a branch with a space', { protectedBranches: ['my branch'] }, 'protectedBranches'],
  ['a branch listed twice', { protectedBranches: ['main', 'main'] }, 'protectedBranches'],
  ['a branch that is not a string', { protectedBranches: [1] }, 'protectedBranches'],
  ['protectedBranches as a string', { protectedBranches: 'main' }, 'protectedBranches'],
  ['more than 100 protected branches', { protectedBranches: Array.from({ length: 101 }, (_, i) => `b${i}`) }, 'protectedBranches'],
  ['a prefix as an option', { prefix: '-x' }, 'prefix'],
  ['a prefix with a slash', { prefix: 'a/b' }, 'prefix'],
  ['a prefix past 200 characters', { prefix: 'p'.repeat(201) }, 'prefix'],
  ['a relative path', { path: 'locks' }, 'path'],
  ['a path as an option', { path: '-locks' }, 'path'],
  ['a path with a newline', { path: '/srv/\nlocks' }, 'path'],
  ['a redis URL with a password', { driver: 'redis', redisUrl: 'redis://:secret@cache:6379' }, 'redisUrl'],
  ['a redis URL of another scheme', { driver: 'redis', redisUrl: 'http://cache' }, 'redisUrl'],
  ['a database URL with a password', { driver: 'sql', databaseUrl: 'postgres://app:secret@db/locks' }, 'databaseUrl'],
  ['a database URL as an option', { driver: 'sql', databaseUrl: '--x' }, 'databaseUrl'],
  ['leaseTtlSeconds below 60', { leaseTtlSeconds: 59 }, 'leaseTtlSeconds'],
  ['leaseTtlSeconds past 24 h', { leaseTtlSeconds: 86_401 }, 'leaseTtlSeconds'],
  ['leaseTtlSeconds as a string', { leaseTtlSeconds: '7200' }, 'leaseTtlSeconds'],
  ['heartbeatSeconds below 5', { heartbeatSeconds: 4 }, 'heartbeatSeconds'],
  ['heartbeatSeconds past half the lease', { leaseTtlSeconds: 7200, heartbeatSeconds: 3601 }, 'heartbeatSeconds', 'runtime only'],
  ['windowSeconds zero', { windowSeconds: 0 }, 'windowSeconds'],
  ['gitTimeoutSeconds not whole', { gitTimeoutSeconds: 1.5 }, 'gitTimeoutSeconds'],
  ['gitTimeoutSeconds past 600', { gitTimeoutSeconds: 601 }, 'gitTimeoutSeconds'],
  ['serverGuard as a string', { serverGuard: 'true' }, 'serverGuard'],
  ['operators as a string', { operators: 'alice@example.com' }, 'operators'],
  ['an empty operator', { operators: [''] }, 'operators'],
  ['an operator as an option', { operators: ['-alice'] }, 'operators'],
  ['an operator with a control character', { operators: ['alice\u001b[2J@example.com'] }, 'operators'],
  ['an operator with a bidi override', { operators: ['alice\u202e@example.com'] }, 'operators'],
  ['an operator listed twice', { operators: ['a@x', 'a@x'] }, 'operators'],
  ['$schema of the wrong type', { $schema: 1 }, '$schema'],
  ['allowedSigners outside the repository', { driver: 'git', allowedSigners: '../keys' }, 'allowedSigners'],
  ['allowedSigners as an absolute path', { driver: 'git', allowedSigners: '/etc/keys' }, 'allowedSigners'],
  ['allowedSigners as an option', { driver: 'git', allowedSigners: '-keys' }, 'allowedSigners'],
  [
    'allowedSigners on the memory driver (no store any other process reads)',
    { driver: 'memory', allowedSigners: 'keys' },
    'allowedSigners',
    'runtime only',
  ],
];

const withBase = (settings: Record<string, unknown>) => JSON.parse(JSON.stringify({ ...base, ...settings }));

describe('.lockstep.json: the strict schema', () => {
  it("uses only keywords the reader implements, and its bounds are the code's", () => {
    assertSupportedSchema(schema as unknown as SchemaNode);
    const p = schema.properties;
    assert.equal(p.leaseTtlSeconds.maximum, MAX_HOLD_MS / 1000);
    assert.equal(p.heartbeatSeconds.maximum, MAX_HOLD_MS / 1000 / 2);
    assert.equal(p.gitTimeoutSeconds.maximum, MAX_GIT_TIMEOUT_SECONDS);
    assert.equal(p.prefix.maxLength, MAX_PREFIX_BYTES);
  });

  it('is what package.json gives the editor for .lockstep.json', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
    assert.deepEqual(manifest.contributes.jsonValidation, [{ fileMatch: '.lockstep.json', url: './schemas/lockstep.schema.json' }]);
  });

  for (const [label, settings] of ACCEPTED) {
    it(`accepts ${label} (and so does the published schema)`, () => {
      const value = withBase(settings);
      assert.doesNotThrow(() => checkContainerFile(value));
      assert.equal(published(value), true, JSON.stringify(published.errors));
    });
  }

  for (const [label, settings, setting, runtimeOnly] of REFUSED) {
    it(`refuses ${label}, naming ${setting}${runtimeOnly ? ' (a rule JSON Schema cannot say)' : ' (and so does the published schema)'}`, () => {
      const value = withBase(settings);
      assert.throws(
        () => parseContainerFile(JSON.stringify(value)),
        (e: unknown) => e instanceof LockConfigurationError && e.code === 'configuration' && e.setting === setting,
        `${label}: a configuration error naming ${setting}`,
      );
      assert.equal(
        published(value),
        runtimeOnly === 'runtime only',
        `the published schema ${runtimeOnly ? 'cannot say this rule' : 'refuses it too'}`,
      );
    });
  }

  it('says which key was meant, and never echoes a value (a misspelt key cannot leak a password)', () => {
    assert.throws(
      () => checkContainerFile(withBase({ protectedBranch: ['main'] })),
      /"protectedBranch" is not a setting Lockstep knows \(did you mean protectedBranches\?\)/,
    );
    assert.throws(
      () => checkContainerFile(withBase({ 'redis://:hunter2@x': 1 })),
      (e: Error) => !e.message.includes('hunter2') && /a key is not a setting/.test(e.message),
    );
    assert.throws(
      () => checkContainerFile(withBase({ redisUrl: 'redis://:hunter2@x' })),
      (e: Error) => !e.message.includes('hunter2'),
    );
  });

  it('refuses a text past the size cap before parsing it, and what is not a JSON object', () => {
    const padded = JSON.stringify({ ...base, operators: ['a@x'] }).replace('{', `{${' '.repeat(MAX_CONTAINER_FILE_BYTES)}`);
    assert.throws(() => parseContainerFile(padded), /larger than 64 KiB/);
    for (const text of ['[]', 'null', '"x"', '{']) assert.throws(() => parseContainerFile(text), LockConfigurationError);
  });

  it("checks a file near the cap entry by entry (100 operators of up to 200 characters, the record's identity limit)", () => {
    const many = { ...base, operators: Array.from({ length: 100 }, (_, i) => `${'o'.repeat(250)}${i}@example.com`) };
    assert.throws(() => checkContainerFile(many), /operators/, 'past 200 characters');
    assert.equal(
      checkAgainstSchema({ ...base, operators: many.operators.map(o => o.slice(150)) }, schema as unknown as SchemaNode),
      undefined,
    );
    assert.equal(MAX_IDENTITY_LENGTH, 200, 'an operator the schema accepts can act: the record takes identities of up to 200');
  });
});

describe("the server guard's pinned settings: as strict", () => {
  const fileText = JSON.stringify({ ...base, operators: ['ops@example.com'], serverGuard: true });
  const pinned = () => JSON.parse(JSON.stringify(newServerSettings(fileText, { branch: 'main', commit: 'a'.repeat(40) })));

  it('accepts what the install writes, with and without pushers', () => {
    assert.doesNotThrow(() => parseServerSettings(JSON.stringify(pinned())));
    const withPushers = {
      ...pinned(),
      pushers: { variable: 'REMOTE_USER', identities: { alice: 'alice@example.com' } },
      store: { path: '/srv/store', redisUrl: 'redis://:pw@cache' },
    };
    assert.doesNotThrow(() => parseServerSettings(JSON.stringify(withPushers)));
  });

  for (const [label, change] of [
    [
      'an unknown key',
      (s: any) => {
        s.protectedBranches = ['main'];
      },
    ],
    [
      'a misspelt key in the pinned container file',
      (s: any) => {
        s.file.protectedBranch = s.file.protectedBranches;
      },
    ],
    [
      'an unknown store key',
      (s: any) => {
        s.store.url = 'x';
      },
    ],
    [
      'an option-shaped store path',
      (s: any) => {
        s.store.path = '--exec=x';
      },
    ],
    [
      'an option-shaped pinned branch',
      (s: any) => {
        s.pinnedFrom.branch = '-f';
      },
    ],
    [
      'a pinned commit that is no commit id',
      (s: any) => {
        s.pinnedFrom.commit = 'HEAD';
      },
    ],
    [
      'requireProof as a string',
      (s: any) => {
        s.requireProof = 'yes';
      },
    ],
    [
      'skewSeconds out of range',
      (s: any) => {
        s.skewSeconds = 3601;
      },
    ],
    [
      'another version',
      (s: any) => {
        s.v = 2;
      },
    ],
    [
      'a pusher variable Lockstep does not know',
      (s: any) => {
        s.pushers = { variable: 'USER', identities: {} };
      },
    ],
    [
      'a pusher identity with a control character',
      (s: any) => {
        s.pushers = { variable: 'REMOTE_USER', identities: { a: 'a\u0007@x' } };
      },
    ],
    [
      'a missing key',
      (s: any) => {
        delete s.store;
      },
    ],
    [
      'a remote name that is a path in the pinned file',
      (s: any) => {
        s.file.remote = './tools/cache.git';
      },
    ],
  ] as const) {
    it(`refuses ${label}: a configuration error that says to install again`, () => {
      const value = pinned();
      change(value);
      assert.throws(
        () => parseServerSettings(JSON.stringify(value)),
        (e: unknown) =>
          e instanceof LockConfigurationError && e.setting === 'lockstep-server.json' && /hooks install --server again/.test(e.message),
      );
    });
  }
});
