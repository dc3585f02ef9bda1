import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveConfig, type LockManagerOptions } from '../../../src/core/config';
import { openDriver } from '../../../src/core/drivers';
import { LockConfigurationError, LockTlsError } from '../../../src/core/errors';
import { keyDigest } from '../../../src/core/names';
import type { Driver } from '../../../src/core/stores/store';
import { hashToken, newOwnerToken } from '../../../src/core/tokens';
import { inCi } from '../../helpers/ci';
import { createFencingTeam, refusedByServer } from '../../helpers/fencingFixture';
import { createGitFixture, expectOk } from '../../helpers/gitFixture';
import { EtcdCluster, requireEtcd } from './etcdCluster';
import { makeTestCertificates, type TestCertificates } from './testCertificates';

/**
 * The etcd driver over TLS with a team's own certificate authority, against real single etcd members started with
 * `--cert-file --key-file` (and one with `--client-cert-auth`) on certificates `openssl` makes here: with the CA
 * named (LOCKSTEP_ETCD_CA_FILE) leases work; without it, or with another CA, the handshake fails with a typed
 * LockTlsError that says what to set; a member asking for a client certificate takes LOCKSTEP_ETCD_CERT_FILE and
 * LOCKSTEP_ETCD_KEY_FILE. `doctor` names the CA by its file name only.
 */
describe('etcd driver over TLS with a team certificate authority (live single etcd members)', function () {
  this.timeout(60_000);
  let dir: string;
  let certs: TestCertificates;
  let tls: EtcdCluster;
  let clientAuth: EtcdCluster;
  const prefix = `lockstep-test-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  const drivers: Driver[] = [];

  const open = async (member: EtcdCluster, extra: LockManagerOptions = {}): Promise<Driver> => {
    const config = resolveConfig(
      { driver: 'etcd', prefix, etcdEndpoints: member.endpoints, connectTimeoutMs: 1_000, commandTimeoutMs: 2_000, ...extra },
      {},
    );
    const driver = await openDriver(config);
    drivers.push(driver);
    return driver;
  };
  /** One claim's outcome: the typed error it failed with, or the claim. */
  const claimOn = async (driver: Driver) => {
    try {
      return await driver.claim(keyDigest(prefix, `tls-${Math.random()}`), hashToken(newOwnerToken()), 30_000, Date.now());
    } catch (error) {
      return error;
    }
  };
  const untrusted = (error: unknown) => {
    assert.ok(error instanceof LockTlsError, String(error));
    assert.equal(error.side, 'server');
    assert.equal(error.retryable, false);
    assert.match(error.message, /not trusted/);
    assert.match(error.message, /LOCKSTEP_ETCD_CA_FILE/);
    // Neither the member's address nor a folder of this machine.
    assert.ok(!error.message.includes('127.0.0.1') && !error.message.includes(dir), error.message);
    return error;
  };

  before(async function () {
    requireEtcd(this);
    if (spawnSync('openssl', ['version'], { stdio: 'ignore' }).status !== 0) {
      if (inCi()) throw new Error('openssl is not installed, and CI must run the etcd TLS tests. Install the Debian package openssl.');
      console.log('\n  !!! SKIPPED: openssl not installed; the etcd TLS tests did not run. !!!\n');
      this.skip();
    }
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-etcd-tls-'));
    certs = makeTestCertificates(dir);
    tls = await EtcdCluster.start(1, { certFile: certs.serverCert, keyFile: certs.serverKey });
    clientAuth = await EtcdCluster.start(1, { certFile: certs.serverCert, keyFile: certs.serverKey, clientCaFile: certs.caFile });
  });

  after(async () => {
    await Promise.all(drivers.map(d => d.close()));
    // Each member stopped by its PID (EtcdMember.stop), then the folders removed.
    await tls?.dispose();
    await clientAuth?.dispose();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('with the CA named in LOCKSTEP_ETCD_CA_FILE, claim, extend and release work over https://', async () => {
    assert.match(tls.endpoints, /^https:\/\/127\.0\.0\.1:\d+$/);
    const config = resolveConfig(
      { driver: 'etcd', prefix, connectTimeoutMs: 1_000, commandTimeoutMs: 2_000 },
      {
        LOCKSTEP_ETCD_ENDPOINTS: tls.endpoints,
        LOCKSTEP_ETCD_CA_FILE: certs.caFile,
      },
    );
    const driver = await openDriver(config);
    drivers.push(driver);
    const key = keyDigest(prefix, 'tls-named');
    const me = hashToken(newOwnerToken());
    const claim = await driver.claim(key, me, 30_000, Date.now());
    assert.ok(claim.claimed);
    assert.equal(claim.fencingToken, 1);
    assert.equal(await driver.extend(key, me, 30_000, Date.now()), true);
    assert.equal(await driver.release(key, me, Date.now()), 'released');
  });

  it('without a CA named, the members are checked against the system authorities: the typed untrusted error', async () => {
    const error = untrusted(await claimOn(await open(tls)));
    assert.match(error.message, /If your team runs its own authority, name its certificate/);
  });

  it('with another CA named, the same typed untrusted error, naming that file by its base name', async () => {
    const error = untrusted(await claimOn(await open(tls, { etcdCaFile: certs.otherCaFile })));
    assert.match(error.message, /the certificate authority in other-ca\.pem \(LOCKSTEP_ETCD_CA_FILE\) did not sign it/);
  });

  it('an unreadable CA file is a configuration error naming the setting and the file name, before any connection', async () => {
    await assert.rejects(
      open(tls, { etcdCaFile: path.join(dir, 'no-such-ca.pem') }),
      (error: unknown) =>
        error instanceof LockConfigurationError &&
        error.setting === 'LOCKSTEP_ETCD_CA_FILE' &&
        /no-such-ca\.pem.*could not be read \(ENOENT\)/.test(error.message) &&
        !error.message.includes(dir),
    );
  });

  it('a member that asks for a client certificate takes LOCKSTEP_ETCD_CERT_FILE and _KEY_FILE; without them, a typed refusal', async () => {
    const refused = await claimOn(await open(clientAuth, { etcdCaFile: certs.caFile }));
    assert.ok(refused instanceof LockTlsError && refused.side === 'client', String(refused));
    assert.match(refused.message, /LOCKSTEP_ETCD_CERT_FILE and LOCKSTEP_ETCD_KEY_FILE/);
    const key = fs.readFileSync(certs.clientKey, 'utf8');
    assert.ok(!refused.message.includes(key));
    const driver = await open(clientAuth, { etcdCaFile: certs.caFile, etcdCertFile: certs.clientCert, etcdKeyFile: certs.clientKey });
    const claim = await claimOn(driver);
    assert.ok(!(claim instanceof Error) && (claim as { claimed: boolean }).claimed, String(claim));
  });

  it("the server guard reads the page through the CA pinned at its install, behind git daemon where no pusher's variable reaches it", async () => {
    const team = await createFencingTeam({
      members: ['alice', 'bob'],
      initArgs: ['--driver', 'etcd'],
      transport: 'daemon',
      env: {
        LOCKSTEP_DRIVER: 'etcd',
        LOCKSTEP_ETCD_ENDPOINTS: tls.endpoints,
        LOCKSTEP_ETCD_CA_FILE: certs.caFile,
        LOCKSTEP_PREFIX: `${prefix}-guard`,
      },
    });
    try {
      const [alice, bob] = team.members as [(typeof team.members)[0], (typeof team.members)[0]];
      expectOk(await team.lockstep(alice.dir, ['acquire']), 'acquire');
      await team.commit(alice, 'alice.txt');
      const landed = await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']);
      assert.equal(landed.code, 0, `the holder lands: the guard proved her grant over TLS\n${landed.stderr}`);
      await team.gitOk(bob.dir, 'pull', '--quiet', '--ff-only', 'origin', 'main');
      await team.commit(bob, 'bob.txt');
      refusedByServer(await team.git(bob.dir, ['push', '--no-verify', 'origin', 'HEAD:refs/heads/main']), "bob's push without the grant");
      const pinned = expectOk(await team.lockstep(team.remote, ['hooks', 'status', '--server']), 'hooks status --server');
      assert.ok(
        (pinned.pinned as string[]).some(line => /etcdCaFile ca\.pem/.test(line)),
        `the CA pinned, by name: ${JSON.stringify(pinned)}`,
      );
    } finally {
      team.dispose();
    }
  });

  it('doctor says which CA file it trusts, by file name only', async () => {
    const env = {
      LOCKSTEP_ETCD_ENDPOINTS: tls.endpoints,
      LOCKSTEP_ETCD_CA_FILE: certs.caFile,
      LOCKSTEP_PREFIX: `${prefix}-doctor`,
    };
    const team = await createGitFixture({ members: ['ana'], operators: ['ana'], initArgs: ['--driver', 'etcd'], env });
    try {
      const doctor = await team.cli(team.member('ana'), ['doctor'], { env });
      const finding = doctor.json.findings.find((f: { check: string }) => f.check === 'tls');
      assert.equal(finding?.level, 'ok', JSON.stringify(doctor.json));
      assert.match(
        finding.found,
        /https:\/\/ endpoints; the members' certificates are checked against the certificate authority in ca\.pem \(LOCKSTEP_ETCD_CA_FILE\)/,
      );
      const ca = fs.readFileSync(certs.caFile, 'utf8').split('\n')[1]!;
      for (const printed of [doctor.stdout, doctor.stderr]) {
        assert.ok(!printed.includes(dir), 'no folder of this machine');
        assert.ok(!printed.includes(ca), "no line of the CA's contents");
      }
    } finally {
      team.dispose();
    }
  });
});
