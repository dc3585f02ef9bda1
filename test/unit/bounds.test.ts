import * as assert from 'node:assert/strict';
import {
  MAX_RETRY_SLEEP_MS,
  parseSeconds,
  parseTtlSeconds,
  TTL_MAX_SECONDS,
  TTL_MIN_SECONDS,
  WAIT_MAX_SECONDS,
  WAIT_MIN_SECONDS,
} from '../../src/core/bounds';
import { ManualClock } from '../../src/core/clock';
import { LockConfigurationError } from '../../src/core/errors';
import { createLockManager } from '../../src/core/leases';
import { keyDigest, namespaceDigest } from '../../src/core/names';
import { createMemoryDriver } from '../../src/core/stores/memory';
import { recordingDriver } from '../helpers/drivers';

function setUp() {
  const { driver, calls } = recordingDriver(createMemoryDriver());
  const manager = createLockManager({ driverInstance: driver, clock: new ManualClock(), env: {} });
  return { manager, calls };
}

/** Asserts a LockConfigurationError for `setting` that does not echo the rejected input. */
async function rejectsConfiguration(promise: Promise<unknown>, setting: string, input?: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(error instanceof LockConfigurationError, `expected a LockConfigurationError, got ${String(error)}`);
  assert.equal(error.setting, setting);
  assert.equal(error.code, 'configuration');
  if (input !== undefined && input.length > 1) assert.ok(!error.message.includes(input), 'the message echoes the input');
}

describe('bounds: the published limits', () => {
  it("are the seed's numbers", () => {
    assert.deepEqual([TTL_MIN_SECONDS, TTL_MAX_SECONDS, WAIT_MIN_SECONDS, WAIT_MAX_SECONDS, MAX_RETRY_SLEEP_MS], [1, 86_400, 0, 60, 25]);
  });
});

describe('bounds: lock names', () => {
  const accepted: [string, string][] = [
    ['one character', 'a'],
    ['one digit', '7'],
    ['200 bytes', 'n'.repeat(200)],
    ['every allowed character', 'Az09:._-zZ'],
    ['the seed example', 'invoice:123'],
    ['a trailing separator-like allowed char', 'a-'],
  ];
  for (const [label, name] of accepted) {
    it(`accepts ${label}`, async () => {
      const { manager, calls } = setUp();
      assert.equal((await manager.acquire(name)).acquired, true);
      assert.equal(calls.length, 1);
    });
  }

  const rejected: [string, unknown][] = [
    ['the empty name', ''],
    ['201 bytes', 'n'.repeat(201)],
    ['NUL', 'a\0b'],
    ['a lone NUL', '\0'],
    ['a slash', 'a/b'],
    ['a backslash', 'a\\b'],
    ['a star', 'a*'],
    ['a question mark', 'a?'],
    ['brackets', 'a[1]'],
    ['a space', 'a b'],
    ['a tab', 'a\tb'],
    ['a newline', 'a\nb'],
    ['DEL', 'a\x7f'],
    ['an escape character', 'a\x1b[0m'],
    ['a Latin-1 letter', 'caf\u00e9'],
    ['a CJK character', '\u540d\u524d'],
    ['an emoji', 'lock-\u{1F512}'],
    ['a non-ASCII name of 100 characters (200+ bytes)', '\u00e9'.repeat(100)],
    ['a leading colon', ':a'],
    ['a leading dot', '.a'],
    ['a leading underscore', '_a'],
    ['a leading hyphen', '-a'],
    ['dot-dot', '..'],
    ['a percent sign', 'a%2F'],
    ['a non-string', 42],
    ['undefined', undefined],
  ];
  for (const [label, name] of rejected) {
    it(`rejects ${label} before touching the backend`, async () => {
      const { manager, calls } = setUp();
      await rejectsConfiguration(manager.acquire(name as string), 'name', typeof name === 'string' ? name : undefined);
      assert.equal(calls.length, 0);
    });
  }

  it('run() applies the same rule and never calls fn', async () => {
    const { manager } = setUp();
    let called = false;
    await rejectsConfiguration(
      manager.run('a/b', () => {
        called = true;
      }),
      'name',
    );
    assert.equal(called, false);
  });
});

describe('bounds: TTL', () => {
  for (const ttl of [1, 1.5, 30, 86_400]) {
    it(`accepts ttl ${ttl}`, async () => {
      const { manager } = setUp();
      assert.equal((await manager.acquire('ttl-ok', { ttl })).acquired, true);
    });
  }
  for (const ttl of [0.999, 0, -1, 86_400.001, 86_401, Number.NaN, Number.POSITIVE_INFINITY, '30']) {
    it(`rejects ttl ${String(ttl)} before touching the backend`, async () => {
      const { manager, calls } = setUp();
      await rejectsConfiguration(manager.acquire('ttl-bad', { ttl: ttl as number }), 'ttl');
      assert.equal(calls.length, 0);
    });
  }
});

describe('bounds: wait', () => {
  for (const wait of [0, 0.001, 60]) {
    it(`accepts wait ${wait}`, async () => {
      const { manager } = setUp();
      assert.equal((await manager.acquire('wait-ok', { wait })).acquired, true);
    });
  }
  for (const wait of [-1, -0.001, 60.01, 61, Number.NaN, Number.POSITIVE_INFINITY, '5']) {
    it(`rejects wait ${String(wait)} before touching the backend`, async () => {
      const { manager, calls } = setUp();
      await rejectsConfiguration(manager.acquire('wait-bad', { wait: wait as number }), 'wait');
      assert.equal(calls.length, 0);
    });
  }
});

describe('bounds: parsing seconds from the command line and environment', () => {
  for (const [text, value] of [
    ['30', 30],
    ['1.5', 1.5],
    [' 60 ', 60],
    ['0', 0],
  ] as const) {
    it(`parses "${text}"`, () => assert.equal(parseSeconds(text, 'ttl'), value));
  }
  for (const text of ['', '-1', '1e3', 'abc', '0x10', '1.', '.5', 'Infinity', '3s']) {
    it(`rejects "${text}" naming the setting`, () => {
      assert.throws(
        () => parseSeconds(text, 'wait'),
        (e: unknown) => e instanceof LockConfigurationError && e.setting === 'wait',
      );
    });
  }
});

describe('bounds: a TTL on the command line is a whole number of seconds (seed 003: int $ttl)', () => {
  for (const [text, value] of [
    ['1', 1],
    ['30', 30],
    [' 60 ', 60],
    ['86400', 86_400],
  ] as const) {
    it(`parses "${text}"`, () => assert.equal(parseTtlSeconds(text), value));
  }
  for (const text of ['1.5', '30.0', '0.999', '86399.5', '0', '86401', '-1', '', 'abc', '1e3', '30s']) {
    it(`rejects "${text}" naming the setting, without echoing it`, () => {
      assert.throws(
        () => parseTtlSeconds(text),
        (e: unknown) =>
          e instanceof LockConfigurationError &&
          e.setting === 'ttl' &&
          /whole number of seconds from 1 to 86400/.test(e.message) &&
          (text.length < 2 || !e.message.includes(text)),
      );
    });
  }
});

describe('bounds: what the backend sees', () => {
  it('only 64-hex SHA-256 digests of (prefix, name), never the name', async () => {
    const { driver, calls } = recordingDriver(createMemoryDriver());
    const manager = createLockManager({ driverInstance: driver, clock: new ManualClock(), env: {}, prefix: 'team-a' });
    const name = 'Distinctive-Name:For.Digest_Test';
    const handle = await manager.acquire(name);
    await handle.release();
    assert.ok(calls.length >= 2);
    for (const call of calls) {
      assert.equal(call.args[0], keyDigest('team-a', name));
      assert.match(String(call.args[0]), /^[0-9a-f]{64}$/);
      assert.match(String(call.args[1]), /^[0-9a-f]{64}$/, 'the owner argument is a hash');
      assert.ok(!JSON.stringify(call.args).includes(name));
      assert.ok(!JSON.stringify(call.args).includes(handle.ownerToken()), 'the backend never sees the owner token itself');
    }
  });

  it('digests differ by prefix, and (a, bc) never collides with (ab, c)', () => {
    assert.notEqual(keyDigest('a', 'x'), keyDigest('b', 'x'));
    assert.notEqual(keyDigest('a', 'bc'), keyDigest('ab', 'c'));
    assert.notEqual(namespaceDigest('a'), namespaceDigest('b'));
    assert.notEqual(namespaceDigest('a'), keyDigest('a', ''));
  });
});
