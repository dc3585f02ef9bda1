import * as assert from 'node:assert/strict';
import { parseContainerFile } from '../../src/core/container/containerFile';
import { LockConfigurationError } from '../../src/core/errors';

/**
 * `.lockstep.json`'s duration bounds (issue #27: removing one of these checks went unnoticed). Every
 * value outside a bound is a configuration error naming the setting, before anything opens a store.
 */
describe('.lockstep.json: duration bounds', () => {
  const CONTAINER = '0b7c9c3e-5d4f-4a8b-9c1d-2e3f4a5b6c7d';
  const text = (settings: Record<string, unknown>) =>
    JSON.stringify({ container: CONTAINER, driver: 'file', protectedBranches: ['main'], operators: [], ...settings });
  const rejects = (settings: Record<string, unknown>, setting: string) =>
    assert.throws(
      () => parseContainerFile(text(settings)),
      (e: unknown) => e instanceof LockConfigurationError && e.setting === setting && e.message.includes(setting),
      `${JSON.stringify(settings)}: rejected, naming ${setting}`,
    );

  it('accepts the defaults and the edges of every bound', () => {
    assert.equal(parseContainerFile(text({})).leaseTtlSeconds, 7200);
    assert.equal(parseContainerFile(text({ leaseTtlSeconds: 60, heartbeatSeconds: 5, windowSeconds: 1 })).leaseTtlSeconds, 60);
    assert.equal(
      parseContainerFile(text({ leaseTtlSeconds: 86_400, heartbeatSeconds: 43_200, windowSeconds: 86_400 })).leaseTtlSeconds,
      86_400,
    );
  });

  for (const [label, value] of [
    ['below 60 s', 59],
    ['zero', 0],
    ['negative', -1],
    ['past 24 h', 86_401],
    ['a string', '7200'],
    ['NaN (null in JSON)', null],
    ['a list', [7200]],
  ] as const) {
    it(`rejects leaseTtlSeconds ${label}`, () => rejects({ leaseTtlSeconds: value }, 'leaseTtlSeconds'));
  }

  for (const [label, value] of [
    ['below 5 s', 4],
    ['past half the lease TTL', 3601],
    ['a string', '600'],
  ] as const) {
    it(`rejects heartbeatSeconds ${label}`, () => rejects({ leaseTtlSeconds: 7200, heartbeatSeconds: value }, 'heartbeatSeconds'));
  }

  for (const [label, value] of [
    ['zero', 0],
    ['past a day', 86_401],
    ['a string', '900'],
  ] as const) {
    it(`rejects windowSeconds ${label}`, () => rejects({ windowSeconds: value }, 'windowSeconds'));
  }
});

/** The OpenPGP listing (docs/protocol.md "OpenPGP (GPG) signatures"): both paths together, on a signed page. */
describe('.lockstep.json: openpgpSigners and openpgpKeys', () => {
  const CONTAINER = '0b7c9c3e-5d4f-4a8b-9c1d-2e3f4a5b6c7d';
  const signed = { driver: 'git', allowedSigners: '.lockstep/allowed_signers' };
  const both = { openpgpSigners: '.lockstep/openpgp_signers', openpgpKeys: '.lockstep/openpgp_keys.asc' };
  const text = (settings: Record<string, unknown>) =>
    JSON.stringify({ container: CONTAINER, protectedBranches: ['main'], operators: [], ...settings });
  const rejects = (settings: Record<string, unknown>, setting: string, what: RegExp) =>
    assert.throws(
      () => parseContainerFile(text(settings)),
      (e: unknown) => e instanceof LockConfigurationError && e.setting === setting && what.test(e.message),
      `${JSON.stringify(settings)}: rejected, naming ${setting}`,
    );

  it('accepts both on a signed git page (control)', () => {
    assert.equal(parseContainerFile(text({ ...signed, ...both })).openpgpKeys, both.openpgpKeys);
  });
  it('refuses one without the other', () => {
    rejects({ ...signed, openpgpSigners: both.openpgpSigners }, 'openpgpSigners', /together/);
    rejects({ ...signed, openpgpKeys: both.openpgpKeys }, 'openpgpKeys', /together/);
  });
  it('refuses them without allowedSigners', () => {
    rejects({ driver: 'git', ...both }, 'openpgpSigners', /allowedSigners/);
    rejects({ driver: 'file', ...both }, 'openpgpSigners', /allowedSigners/);
  });
  it('accepts them on every driver that keeps a signed page (the signed chain of file, SQL, Redis, etcd too)', () => {
    for (const driver of ['file', 'sql', 'redis', 'etcd']) {
      assert.equal(parseContainerFile(text({ ...signed, driver, ...both })).openpgpSigners, both.openpgpSigners, driver);
    }
  });
  it('refuses a path that leaves the repository', () => {
    assert.throws(() => parseContainerFile(text({ ...signed, ...both, openpgpKeys: '../keys.asc' })), LockConfigurationError);
  });
});
