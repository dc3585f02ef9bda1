import * as assert from 'node:assert/strict';
import {
  ClientClosedError,
  EtcdAuthenticationFailedError,
  EtcdError,
  EtcdPermissionDeniedError,
  GRPCDeadlineExceededError,
  GRPCFailedPreconditionError,
  GRPCUnavailableError,
} from 'etcd3';
import { LockConfigurationError } from '../../src/core/errors';
import { etcdEndpointsWithoutCredentials, parseEtcdEndpoints } from '../../src/core/stores/etcd/etcdEndpoints';
import { classifyEtcdError, translateEtcdError } from '../../src/core/stores/etcd/etcdErrors';

describe('etcd endpoints and errors', () => {
  it('parses a comma-separated list of client URLs, with one user and password taken out of the hosts', () => {
    assert.deepEqual(parseEtcdEndpoints(' http://A.example:2379, http://u:p%40ss@10.0.0.2:2380 ,http://[::1]'), {
      hosts: ['http://a.example:2379', 'http://10.0.0.2:2380', 'http://[::1]:2379'],
      credentials: { username: 'u', password: 'p@ss' },
    });
    assert.deepEqual(parseEtcdEndpoints('https://h:2379').credentials, undefined);
  });

  it('refuses other schemes, mixed schemes, different passwords and an empty list, naming the setting and never the text', () => {
    for (const text of [
      '',
      ' , ',
      'redis://h:2379',
      'h:2379',
      'http://h:99999',
      'http://h:1,https://g:2',
      'http://u:Pw-One@h,http://u:Pw-Two@g',
    ]) {
      assert.throws(
        () => parseEtcdEndpoints(text),
        (error: unknown) =>
          error instanceof LockConfigurationError &&
          error.setting === 'LOCKSTEP_ETCD_ENDPOINTS' &&
          !error.message.includes('Pw-One') &&
          !error.message.includes('Pw-Two'),
        text,
      );
    }
  });

  it('refuses a user or password with a malformed "%" as a typed error that repeats neither', () => {
    for (const text of ['http://an%zza:Pw-Secret@h:2379', 'http://ana-login:Pw%-Secret@h:2379', 'http://ana-login:Pw-Secret%@h:2379']) {
      assert.throws(
        () => parseEtcdEndpoints(text),
        (error: unknown) =>
          error instanceof LockConfigurationError &&
          error.setting === 'LOCKSTEP_ETCD_ENDPOINTS' &&
          /percent-encoded/.test(error.message) &&
          !/Secret|an%zza|ana-login/.test(`${error.message} ${String(error.cause)}`),
        text,
      );
    }
  });

  it('prints and commits the endpoints without credentials, sorted, so another order is the same page', () => {
    assert.equal(etcdEndpointsWithoutCredentials('http://u:secret@b:2379,http://a:2379'), 'http://a:2379,http://b:2379');
    assert.equal(etcdEndpointsWithoutCredentials('http://a:2379,http://u:secret@b:2379'), 'http://a:2379,http://b:2379');
    assert.equal(etcdEndpointsWithoutCredentials('nonsense://u:secret@b'), '(unparsable etcd endpoints)');
  });

  it('tells no quorum, timeouts, authentication and outages apart, keeping only a short code of the client message', () => {
    const cases: [Error, string][] = [
      [new EtcdError('etcdserver: request timed out'), 'no-quorum'],
      [new EtcdError('etcdserver: no leader'), 'no-quorum'],
      [new GRPCDeadlineExceededError('Deadline exceeded after 1.001s'), 'timeout'],
      [new EtcdAuthenticationFailedError('etcdserver: authentication failed, invalid user ID or password'), 'authentication'],
      [new EtcdPermissionDeniedError('etcdserver: permission denied'), 'permission'],
      [
        new GRPCUnavailableError('14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 127.0.0.1:2379'),
        'unreachable',
      ],
      [new ClientClosedError('get'), 'closed'],
      [new GRPCFailedPreconditionError('9 FAILED_PRECONDITION: etcdserver: authentication is not enabled'), 'authentication'],
    ];
    for (const [error, kind] of cases) assert.equal(classifyEtcdError(error).kind, kind, error.message);
    const handshake = (last: string) =>
      new GRPCUnavailableError(`14 UNAVAILABLE: No connection established. Last error: ${last}. Resolution note: `);
    for (const [last, kind, code] of [
      ['Error: unable to verify the first certificate', 'untrusted', 'UNTRUSTED-CERTIFICATE'],
      ['Error: self-signed certificate in certificate chain', 'untrusted', 'UNTRUSTED-CERTIFICATE'],
      ['Error: unable to get local issuer certificate', 'untrusted', 'UNTRUSTED-CERTIFICATE'],
      ['Error: certificate has expired', 'untrusted', 'CERTIFICATE-EXPIRED'],
      [
        "Error: Hostname/IP does not match certificate's altnames: IP: 127.0.0.2 is not in the cert's list: 127.0.0.1",
        'untrusted',
        'CERTIFICATE-NAME-MISMATCH',
      ],
      [
        '80:error:0A000412:SSL routines:ssl3_read_bytes:sslv3 alert bad certificate:rec_layer_s3.c:1601:SSL alert number 42',
        'client-certificate',
        'CLIENT-CERTIFICATE-REFUSED',
      ],
      ['Error: connect ECONNREFUSED 127.0.0.1:2379', 'unreachable', 'UNAVAILABLE'],
    ] as const)
      assert.deepEqual(classifyEtcdError(handshake(last)), { kind, code }, last);
    const translated = translateEtcdError(cases[5]![0], { connectTimeoutMs: 500, commandTimeoutMs: 900 });
    assert.ok(!`${translated.message} ${String((translated as Error & { cause?: unknown }).cause)}`.includes('127.0.0.1'));
    assert.equal(translateEtcdError(cases[3]![0], { connectTimeoutMs: 500, commandTimeoutMs: 900 }).retryable, false);
  });
});
