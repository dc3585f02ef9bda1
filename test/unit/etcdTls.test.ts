import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GRPCUnavailableError } from 'etcd3';
import { resolveConfig } from '../../src/core/config';
import { LockConfigurationError, LockTlsError } from '../../src/core/errors';
import { translateEtcdError } from '../../src/core/stores/etcd/etcdErrors';
import { readEtcdTls, type EtcdTlsFiles } from '../../src/core/stores/etcd/etcdTls';

const CERT = '-----BEGIN CERTIFICATE-----\nMIIB-not-checked-here\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nKEY-CONTENTS-NEVER-PRINTED\n-----END PRIVATE KEY-----\n';

describe('etcd TLS settings: the CA bundle and client certificate files', () => {
  let dir: string;
  const file = (name: string, text: string) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, text);
    return f;
  };
  const none: EtcdTlsFiles = { etcdCaFile: undefined, etcdCertFile: undefined, etcdKeyFile: undefined };
  const refused = (files: Partial<EtcdTlsFiles>, setting: string, gist: RegExp, secure = true) =>
    assert.throws(
      () => readEtcdTls({ ...none, ...files }, secure),
      (error: unknown) =>
        error instanceof LockConfigurationError &&
        error.setting === setting &&
        gist.test(error.message) &&
        !error.message.includes(dir) &&
        !/KEY-CONTENTS|SECRET-TEXT/.test(`${error.message} ${String(error.cause)}`),
    );

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-etcdtls-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('come from LOCKSTEP_ETCD_CA_FILE / _CERT_FILE / _KEY_FILE over the options; none named: no TLS settings (system authorities)', () => {
    const config = resolveConfig(
      { etcdCaFile: '/opt/a.pem', etcdCertFile: '/opt/c.pem' },
      { LOCKSTEP_ETCD_CA_FILE: '/etc/team-ca.pem', LOCKSTEP_ETCD_KEY_FILE: '/etc/k.pem' },
    );
    assert.deepEqual([config.etcdCaFile, config.etcdCertFile, config.etcdKeyFile], ['/etc/team-ca.pem', '/opt/c.pem', '/etc/k.pem']);
    assert.equal(readEtcdTls(none, true), undefined);
  });

  it('reads the CA bundle (and the client certificate and key) as the client takes them', () => {
    const ca = file('team-ca.pem', CERT);
    assert.deepEqual(readEtcdTls({ ...none, etcdCaFile: ca }, true), { rootCertificate: Buffer.from(CERT) });
    const both = readEtcdTls({ etcdCaFile: ca, etcdCertFile: file('me.pem', CERT), etcdKeyFile: file('me.key', KEY) }, true);
    assert.equal(both?.privateKey?.toString(), KEY);
    assert.equal(both?.certChain?.toString(), CERT);
    // A client certificate without a CA bundle: Node's own authorities, as gRPC uses when given none.
    const systemRoots = readEtcdTls({ ...none, etcdCertFile: file('me.pem', CERT), etcdKeyFile: file('me.key', KEY) }, true);
    assert.ok((systemRoots?.rootCertificate.length ?? 0) > 1000);
  });

  it('refuses an unreadable or non-PEM file by its setting and base name, never the folder or the contents', () => {
    refused({ etcdCaFile: path.join(dir, 'missing-ca.pem') }, 'LOCKSTEP_ETCD_CA_FILE', /missing-ca\.pem.*could not be read \(ENOENT\)/);
    refused({ etcdCaFile: dir }, 'LOCKSTEP_ETCD_CA_FILE', /could not be read \(EISDIR\)/);
    refused({ etcdCaFile: file('ca.der', 'SECRET-TEXT') }, 'LOCKSTEP_ETCD_CA_FILE', /ca\.der.*holds no PEM certificate authority bundle/);
    refused(
      { etcdCaFile: file('ca.pem', CERT), etcdCertFile: file('me.pem', CERT), etcdKeyFile: file('me.crt', CERT) },
      'LOCKSTEP_ETCD_KEY_FILE',
      /me\.crt.*holds no PEM private key/,
    );
  });

  it('refuses a certificate without its key (or the reverse), and TLS files beside http:// endpoints', () => {
    refused(
      { etcdCertFile: file('me.pem', CERT) },
      'LOCKSTEP_ETCD_KEY_FILE',
      /LOCKSTEP_ETCD_CERT_FILE is set without LOCKSTEP_ETCD_KEY_FILE/,
    );
    refused(
      { etcdKeyFile: file('me.key', KEY) },
      'LOCKSTEP_ETCD_CERT_FILE',
      /LOCKSTEP_ETCD_KEY_FILE is set without LOCKSTEP_ETCD_CERT_FILE/,
    );
    refused({ etcdCaFile: file('ca.pem', CERT) }, 'LOCKSTEP_ETCD_CA_FILE', /http:\/\/ endpoints, which use no TLS.*https:\/\//, false);
  });

  it('a failed handshake is a LockTlsError, not retryable, that says which setting to change and names the CA file by base name only', () => {
    const untrusted = new GRPCUnavailableError(
      '14 UNAVAILABLE: No connection established. Last error: Error: unable to verify the first certificate. Resolution note: ',
    );
    const system = translateEtcdError(untrusted, { connectTimeoutMs: 500, commandTimeoutMs: 900 });
    assert.ok(system instanceof LockTlsError && system.side === 'server' && system.reason === 'tls' && !system.retryable);
    assert.match(system.message, /not trusted.*name its certificate \(a PEM file\) in LOCKSTEP_ETCD_CA_FILE/);
    const named = translateEtcdError(untrusted, { connectTimeoutMs: 500, commandTimeoutMs: 900, caFileName: 'team-ca.pem' });
    assert.match(named.message, /the certificate authority in team-ca\.pem \(LOCKSTEP_ETCD_CA_FILE\) did not sign it/);
    const client = translateEtcdError(
      new GRPCUnavailableError(
        '14 UNAVAILABLE: No connection established. Last error: error:0A000412:SSL routines::sslv3 alert bad certificate',
      ),
      { connectTimeoutMs: 500, commandTimeoutMs: 900 },
    );
    assert.ok(client instanceof LockTlsError && client.side === 'client');
    assert.match(client.message, /LOCKSTEP_ETCD_CERT_FILE and LOCKSTEP_ETCD_KEY_FILE/);
  });
});
