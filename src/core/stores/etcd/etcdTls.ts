import * as fs from 'node:fs';
import * as path from 'node:path';
import * as tls from 'node:tls';
import type { ResolvedConfig } from '../../config';
import { LockConfigurationError } from '../../errors';
import { DEFAULT_ETCD_ENDPOINTS, parseEtcdEndpoints } from './etcdEndpoints';

/** The TLS settings of the etcd driver as the environment names them (the options: etcdCaFile, etcdCertFile, etcdKeyFile). */
export const ETCD_CA_SETTING = 'LOCKSTEP_ETCD_CA_FILE';
export const ETCD_CERT_SETTING = 'LOCKSTEP_ETCD_CERT_FILE';
export const ETCD_KEY_SETTING = 'LOCKSTEP_ETCD_KEY_FILE';

/** What the etcd client is given for `https://` endpoints: the files' contents (never printed), as etcd3 takes them. */
export interface EtcdTlsCredentials {
  readonly rootCertificate: Buffer;
  readonly certChain?: Buffer;
  readonly privateKey?: Buffer;
}

export interface EtcdTlsFiles {
  readonly etcdCaFile: string | undefined;
  readonly etcdCertFile: string | undefined;
  readonly etcdKeyFile: string | undefined;
}

/**
 * Reads the certificate authority bundle and the client certificate and key named for the etcd driver, or
 * undefined when none is named (`https://` endpoints are then checked against the system's authorities).
 * Every error names the setting and the file's base name, never its contents. A client certificate without a
 * CA bundle goes with Node's own list of authorities, the one gRPC uses when it is given none.
 */
export function readEtcdTls(files: EtcdTlsFiles, secure: boolean): EtcdTlsCredentials | undefined {
  const { etcdCaFile, etcdCertFile, etcdKeyFile } = files;
  if (etcdCaFile === undefined && etcdCertFile === undefined && etcdKeyFile === undefined) return undefined;
  if (!secure) {
    const setting = etcdCaFile !== undefined ? ETCD_CA_SETTING : etcdCertFile !== undefined ? ETCD_CERT_SETTING : ETCD_KEY_SETTING;
    throw new LockConfigurationError(
      `${setting} is set, but LOCKSTEP_ETCD_ENDPOINTS lists http:// endpoints, which use no TLS. Write the members' client URLs with https:// (etcd started with --cert-file and --key-file), or unset ${setting}.`,
      { setting },
    );
  }
  if ((etcdCertFile === undefined) !== (etcdKeyFile === undefined)) {
    const [given, missing] = etcdCertFile === undefined ? [ETCD_KEY_SETTING, ETCD_CERT_SETTING] : [ETCD_CERT_SETTING, ETCD_KEY_SETTING];
    throw new LockConfigurationError(
      `${given} is set without ${missing}: etcd's client-certificate authentication needs both, this client's certificate and its private key (PEM files). Set ${missing}, or unset ${given}.`,
      { setting: missing },
    );
  }
  const rootCertificate =
    etcdCaFile === undefined
      ? Buffer.from(tls.rootCertificates.join('\n'))
      : readPem(etcdCaFile, ETCD_CA_SETTING, 'CERTIFICATE', 'certificate authority bundle');
  if (etcdCertFile === undefined || etcdKeyFile === undefined) return { rootCertificate };
  return {
    rootCertificate,
    certChain: readPem(etcdCertFile, ETCD_CERT_SETTING, 'CERTIFICATE', 'client certificate'),
    privateKey: readPem(etcdKeyFile, ETCD_KEY_SETTING, 'PRIVATE KEY', 'private key'),
  };
}

/** The base name of a file a TLS setting names: what `doctor` and the errors say of it (the folder may name a person). */
export function tlsFileName(file: string): string {
  return path.basename(file);
}

/**
 * How the members are reached, as `doctor` tells it: `http` (no TLS), or `https` with the base names of the CA
 * bundle (none: the system's authorities) and of the client certificate. Undefined when the endpoints do not
 * parse (the page read says why). Names only: never a folder, never a file's contents.
 */
export function etcdTransport(
  config: ResolvedConfig,
): { scheme: 'http' } | { scheme: 'https'; caFile?: string; certFile?: string } | undefined {
  let secure: boolean;
  try {
    secure = parseEtcdEndpoints(config.etcdEndpoints ?? DEFAULT_ETCD_ENDPOINTS).hosts[0]!.startsWith('https://');
  } catch {
    return undefined;
  }
  if (!secure) return { scheme: 'http' };
  return {
    scheme: 'https',
    ...(config.etcdCaFile !== undefined ? { caFile: tlsFileName(config.etcdCaFile) } : {}),
    ...(config.etcdCertFile !== undefined ? { certFile: tlsFileName(config.etcdCertFile) } : {}),
  };
}

function readPem(file: string, setting: string, label: string, what: string): Buffer {
  let contents: Buffer;
  try {
    contents = fs.readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new LockConfigurationError(
      `The ${what} that ${setting} names (${tlsFileName(file)}) could not be read (${code}). Check the path (absolute, or relative to the folder Lockstep runs in) and that this user may read the file.`,
      { setting, cause: new Error(`read ${code}`) },
    );
  }
  // A PEM block's label ends the BEGIN line: "CERTIFICATE", or "PRIVATE KEY" after RSA/EC/ENCRYPTED or nothing.
  if (!new RegExp(`-----BEGIN [A-Z0-9 ]*${label}-----`).test(contents.toString('latin1')))
    throw new LockConfigurationError(
      `The file that ${setting} names (${tlsFileName(file)}) holds no PEM ${what} (no "-----BEGIN …${label}-----" line). Name the PEM file itself (convert a DER file with openssl x509 -inform der -in FILE -out FILE.pem).`,
      { setting },
    );
  return contents;
}
