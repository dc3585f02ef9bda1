import * as assert from 'node:assert/strict';
import { LockConfigurationError } from '../../src/core/errors';
import {
  describeServerSettings,
  MAX_SERVER_SETTINGS_BYTES,
  newServerSettings,
  parseServerSettings,
  pusherIdentity,
  SERVER_SETTINGS_FILE,
  serverContainerSettings,
  serverDriverOptions,
  withoutCredentials,
} from '../../src/core/guard/serverSettings';

/**
 * The server guard's pinned settings (`lockstep-server.json`): what a damaged file says, what the
 * guard's store options are, who the pusher is, and what `hooks status --server` prints.
 */

const CONTAINER = '0b7e2c1a-5d4f-4c3b-9a2e-1f0d3c4b5a69';
const COMMIT = 'a'.repeat(40);
const fileText = (extra: object = {}) => JSON.stringify({ container: CONTAINER, protectedBranches: ['main'], ...extra });
const pinned = (extra: object = {}, options: Parameters<typeof newServerSettings>[2] = {}) =>
  newServerSettings(fileText(extra), { branch: 'main', commit: COMMIT }, options);

/** The configuration error parsing `text` throws (it must throw one, naming the file as the setting). */
function refusal(text: string): LockConfigurationError {
  try {
    parseServerSettings(text);
  } catch (error) {
    assert.ok(error instanceof LockConfigurationError, String(error));
    assert.equal(error.setting, SERVER_SETTINGS_FILE);
    return error;
  }
  assert.fail(`expected ${text.slice(0, 80)} to be refused`);
}
const settingsWith = (change: (s: Record<string, unknown>) => void): string => {
  const s = JSON.parse(JSON.stringify(pinned())) as Record<string, unknown>;
  change(s);
  return JSON.stringify(s);
};

describe('server guard: pinned settings file', () => {
  describe('a damaged file refuses every push, saying what is wrong and to install again', () => {
    it('larger than 256 KiB (exactly 256 KiB is read)', () => {
      const text = JSON.stringify(pinned());
      const padded = (size: number) => text + ' '.repeat(size - text.length);
      assert.deepEqual(parseServerSettings(padded(MAX_SERVER_SETTINGS_BYTES)), pinned());
      assert.equal(
        refusal(padded(MAX_SERVER_SETTINGS_BYTES + 1)).message,
        'lockstep-server.json is larger than 256 KiB; run lockstep hooks install --server again.',
      );
    });

    it('not JSON (keeping the parser error as the cause), or JSON that is not an object', () => {
      const notJson = refusal('{');
      assert.equal(notJson.message, 'lockstep-server.json is not valid JSON; run lockstep hooks install --server again.');
      assert.ok(notJson.cause instanceof SyntaxError);
      for (const text of ['null', '[]', '3', '"text"', 'true']) {
        assert.equal(
          refusal(text).message,
          'lockstep-server.json must hold a JSON object; run lockstep hooks install --server again.',
          text,
        );
      }
    });

    it('names the wrong value, the missing key or the unknown key and where it is', () => {
      const why = (text: string) =>
        refusal(text).message.replace(
          /^The server guard's settings are not valid \((.*)\); run lockstep hooks install --server again\.$/,
          '$1',
        );
      assert.equal(why(settingsWith(s => (s.pinnedFrom = { branch: 'main', commit: 'HEAD' }))), 'pinnedFrom.commit must be a commit id');
      assert.equal(why(settingsWith(s => (s.skewSeconds = 3601))), 'skewSeconds must be 0 to 3600');
      assert.equal(why(settingsWith(s => delete s.skewSeconds)), 'skewSeconds is missing');
      assert.equal(why(settingsWith(s => (s.pinnedFrom = { branch: 'main' }))), 'pinnedFrom.commit is missing');
      assert.equal(why(settingsWith(s => (s.extra = 1))), 'an unknown key "extra"');
      assert.equal(why(settingsWith(s => (s.store = { user: 'x' }))), 'an unknown key "user" in store');
      assert.equal(why(settingsWith(s => (s.pinnedFrom = { branch: 'main', commit: COMMIT, x: 1 }))), 'an unknown key "x" in pinnedFrom');
      // A key is quoted only when it is short and plain: it is the pusher's or an editor's text, printed to a terminal.
      assert.equal(why(settingsWith(s => (s['k'.repeat(40)] = 1))), `an unknown key "${'k'.repeat(40)}"`);
      for (const key of ['k'.repeat(41), 'bad key', '\u001b[31mred', `x${'\n'}`])
        assert.equal(why(settingsWith(s => (s[key] = 1))), 'an unknown key', JSON.stringify(key));
    });
  });

  it("the guard's store: the committed driver and prefix, the server's own folder and credentials, the repository in place", () => {
    const file = pinned({ driver: 'redis', prefix: 'team', redisUrl: 'redis://committed:6379/0' });
    assert.deepEqual(serverDriverOptions(file, '/srv/repo.git'), {
      driver: 'redis',
      prefix: 'team',
      redisUrl: 'redis://committed:6379/0',
      gitDir: '/srv/repo.git',
      gitRemote: '.',
    });
    const own = pinned(
      { driver: 'redis', prefix: 'team', redisUrl: 'redis://committed:6379/0' },
      { store: { path: '/srv/locks', redisUrl: 'redis://u:pw@server:6379/1', databaseUrl: 'postgres://db/x' } },
    );
    assert.deepEqual(serverDriverOptions(own, '/srv/repo.git'), {
      driver: 'redis',
      prefix: 'team',
      path: '/srv/locks',
      redisUrl: 'redis://u:pw@server:6379/1',
      databaseUrl: 'postgres://db/x',
      gitDir: '/srv/repo.git',
      gitRemote: '.',
    });
  });

  it("etcd: the guard keeps the server's members with their credentials and its TLS files, and shows neither password nor folder", () => {
    const own = pinned(
      { driver: 'etcd', etcdEndpoints: 'https://10.0.0.1:2379,https://10.0.0.2:2379' },
      {
        store: {
          etcdEndpoints: 'https://lockstep:s3cret@10.0.0.2:2379,https://lockstep:s3cret@10.0.0.1:2379',
          etcdCaFile: '/srv/etcd/team-ca.pem',
          etcdCertFile: '/srv/etcd/guard.pem',
          etcdKeyFile: '/srv/etcd/guard-key.pem',
        },
      },
    );
    assert.deepEqual(serverDriverOptions(own, '/srv/repo.git'), {
      driver: 'etcd',
      etcdEndpoints: 'https://lockstep:s3cret@10.0.0.2:2379,https://lockstep:s3cret@10.0.0.1:2379',
      etcdCaFile: '/srv/etcd/team-ca.pem',
      etcdCertFile: '/srv/etcd/guard.pem',
      etcdKeyFile: '/srv/etcd/guard-key.pem',
      gitDir: '/srv/repo.git',
      gitRemote: '.',
    });
    const store = describeServerSettings(own)[4];
    assert.equal(
      store,
      'store: driver etcd, etcd https://10.0.0.1:2379,https://10.0.0.2:2379, etcdCaFile team-ca.pem, etcdCertFile guard.pem, etcdKeyFile guard-key.pem',
    );
    assert.ok(!store.includes('s3cret') && !store.includes('/srv/etcd'), store);
    // A file the pinned settings do not know is still refused: only these keys may be pinned.
    assert.throws(() => pinned({ driver: 'etcd' }, { store: { etcdToken: 'x' } as never }), LockConfigurationError);
  });

  it("the container settings the guard judges transitions with are the pinned file's", () => {
    assert.deepEqual(
      serverContainerSettings(pinned({ leaseTtlSeconds: 600, heartbeatSeconds: 60, windowSeconds: 120, operators: ['ops@example.com'] })),
      {
        leaseTtlMs: 600_000,
        heartbeatMs: 60_000,
        windowMs: 120_000,
        operators: ['ops@example.com'],
      },
    );
  });

  it("the pusher's name is trimmed, and a long unmapped one is cut to 100 characters in the refusal", () => {
    const s = pinned({}, { pushers: { variable: 'GL_USERNAME', identities: { alice: 'alice@example.com' } } });
    assert.deepEqual(pusherIdentity(s, { GL_USERNAME: ' alice\n' }), { identity: 'alice@example.com' });
    assert.match((pusherIdentity(s, { GL_USERNAME: '   ' }) as { refusal: string }).refusal, /GL_USERNAME is empty/);
    const long = `m${'x'.repeat(150)}`;
    const { refusal: why } = pusherIdentity(s, { GL_USERNAME: long }) as { refusal: string };
    assert.ok(!why.includes(long.slice(0, 101)), why);
    assert.equal(why.split(long.slice(0, 100)).length, 3, 'the name, cut, in the sentence and in the command');
  });

  describe('hooks status --server lines', () => {
    it('every setting the guard decides with, the server store winning over the committed one, without credentials', () => {
      const s = pinned(
        {
          driver: 'redis',
          prefix: 'team',
          path: '/committed',
          redisUrl: 'redis://committed:6379/0',
          operators: ['ops@example.com', 'b@x.org'],
        },
        {
          requireProof: true,
          store: { path: '/srv/locks', redisUrl: 'redis://u:secret@server:6379/1', databaseUrl: 'postgres://bob:pw@db/x' },
          skewSeconds: 30,
          pushers: { variable: 'REMOTE_USER', identities: { alice: 'alice@example.com', bob: 'bob@example.com' } },
        },
      );
      assert.deepEqual(describeServerSettings({ ...s, file: { ...s.file, protectedBranches: ['main', 'release'] } }), [
        `container ${CONTAINER}`,
        'pinned from main at aaaaaaaaaaaa',
        'protected branches: main, release',
        'proof of the live grant required: yes',
        'store: driver redis, prefix team, path /srv/locks, redis redis://***@server:6379/1, database postgres://***@db/x',
        'operators: ops@example.com, b@x.org',
        'clock skew allowed: 30 s',
        'pushers: named by REMOTE_USER; 2 mapped',
      ]);
    });

    it('the committed store when the server keeps none, and what is absent said as such', () => {
      const committed = pinned({ driver: 'redis', path: '/committed', redisUrl: 'redis://committed:6379/0' }, { requireProof: false });
      assert.deepEqual(describeServerSettings(committed), [
        `container ${CONTAINER}`,
        'pinned from main at aaaaaaaaaaaa',
        'protected branches: main',
        'proof of the live grant required: no (only lock-record transitions are checked)',
        'store: driver redis, path /committed, redis redis://committed:6379/0',
        'operators: (none)',
        'clock skew allowed: 120 s',
        'pushers: not authenticated by the server (identities are declared by clients)',
      ]);
      const sql = pinned({ driver: 'sql', databaseUrl: 'postgres://committed/x' });
      assert.match(describeServerSettings(sql)[4], /^store: driver sql, database postgres:\/\/committed\/x$/);
    });

    it('hides the user and password of a URL, and leaves a path that only contains one as it is', () => {
      assert.equal(withoutCredentials('redis://u:pw@h:1/0'), 'redis://***@h:1/0');
      assert.equal(withoutCredentials('/srv/locks/redis://u:pw@h'), '/srv/locks/redis://u:pw@h');
    });
  });
});
