import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** PEM files made by `openssl` in one folder: two unrelated authorities, a server certificate for 127.0.0.1 and a client's. */
export interface TestCertificates {
  /** The authority that signed `serverCert` and `clientCert`. */
  readonly caFile: string;
  /** An authority that signed nothing here: trusting it alone must not trust the server. */
  readonly otherCaFile: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
}

/**
 * Makes a throwaway certificate authority and, signed by it, a server certificate for 127.0.0.1
 * (subjectAltName IP:127.0.0.1, as TLS checks it) and a client certificate (CN lockstep), plus a second,
 * unrelated authority; every file under `dir`. Keys are EC P-256: quick to make.
 */
export function makeTestCertificates(dir: string): TestCertificates {
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const key = (name: string) => openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file(name));
  const authority = (name: string, subject: string) => {
    key(`${name}.key`);
    openssl('req', '-x509', '-new', '-key', file(`${name}.key`), '-subj', subject, '-days', '2', '-out', file(`${name}.pem`));
  };
  const signed = (name: string, subject: string, extensions: string) => {
    key(`${name}.key`);
    openssl('req', '-new', '-key', file(`${name}.key`), '-subj', subject, '-out', file(`${name}.csr`));
    fs.writeFileSync(file(`${name}.ext`), extensions);
    openssl(
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      file(`${name}.ext`),
      '-out',
      file(`${name}.pem`),
    );
  };
  authority('ca', '/CN=Lockstep test CA');
  authority('other-ca', '/CN=Some other CA');
  signed('server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  signed('client', '/CN=lockstep', 'extendedKeyUsage=clientAuth\n');
  return {
    caFile: file('ca.pem'),
    otherCaFile: file('other-ca.pem'),
    serverCert: file('server.pem'),
    serverKey: file('server.key'),
    clientCert: file('client.pem'),
    clientKey: file('client.key'),
  };
}
