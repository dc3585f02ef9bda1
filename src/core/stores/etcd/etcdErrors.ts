import {
  ClientClosedError,
  EtcdAuthenticationFailedError,
  EtcdError,
  EtcdPermissionDeniedError,
  EtcdUserNotFoundError,
  GRPCDeadlineExceededError,
  GRPCUnauthenticatedError,
  GRPCUnavailableError,
} from 'etcd3';
import { LockBackendError, LockError, LockStorageError, LockTlsError } from '../../errors';

/**
 * Translates whatever the etcd client throws into Lockstep's typed errors, once, at the driver's edge.
 * gRPC messages can carry a member's address, so the translated error keeps only a short code
 * (`NO-LEADER`, `DEADLINE`, `UNAVAILABLE`, …) as its cause; nothing here ever sees the password.
 */
export class EtcdFailures {
  constructor(private readonly settings: EtcdErrorSettings) {}

  async run<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw translateEtcdError(error, this.settings);
    }
  }
}

/** What the messages may say of the driver's settings: the timeouts, and the CA bundle's base name when one is named. */
export interface EtcdErrorSettings {
  readonly connectTimeoutMs: number;
  readonly commandTimeoutMs: number;
  readonly caFileName?: string;
}

export type EtcdFailureKind =
  | 'no-quorum'
  | 'timeout'
  | 'authentication'
  | 'permission'
  | 'untrusted'
  | 'client-certificate'
  | 'unreachable'
  | 'closed'
  | 'refused';

export function translateEtcdError(error: unknown, timeouts: EtcdErrorSettings): LockError {
  if (error instanceof LockError) return error;
  const { kind, code } = classifyEtcdError(error);
  const cause = new Error(`etcd: ${code}`);
  switch (kind) {
    case 'no-quorum':
      return new LockBackendError(
        'etcd',
        'The etcd cluster has no leader (a majority of its members is down or cannot reach each other), so it accepts no read or write; nothing was changed by this operation unless `lockstep status` shows it. Bring members back until a majority runs (`etcdctl endpoint status --cluster` shows the leader), then try again.',
        { cause },
      );
    case 'timeout':
      return new LockBackendError(
        'etcd',
        `etcd did not answer within the command timeout (${timeouts.commandTimeoutMs} ms): the cluster may be electing a leader or have lost its quorum. Try again; \`lockstep status\` shows whether the last change took effect, and commandTimeoutMs raises the bound.`,
        { cause },
      );
    case 'authentication':
      if (code === 'AUTH-NOT-ENABLED')
        return new LockBackendError(
          'etcd',
          'LOCKSTEP_ETCD_ENDPOINTS carries a user and password, and this etcd cluster has authentication turned off, so it refuses them (AUTH-NOT-ENABLED). Remove them from LOCKSTEP_ETCD_ENDPOINTS, or turn authentication on (etcdctl auth enable).',
          { cause, retryable: false },
        );
      return new LockBackendError(
        'etcd',
        `etcd refused Lockstep's user or password (${code}). Check the user and password written into LOCKSTEP_ETCD_ENDPOINTS (http://USER:PASSWORD@host:2379).`,
        { cause, retryable: false },
      );
    case 'permission':
      return new LockBackendError(
        'etcd',
        "etcd refused the operation: the user's roles do not allow reading and writing keys under this prefix. Grant the user a role with readwrite permission on the prefix (etcdctl role grant-permission ROLE --prefix=true readwrite PREFIX/).",
        { cause, retryable: false },
      );
    case 'untrusted':
      return new LockTlsError(
        'etcd',
        'server',
        timeouts.caFileName === undefined
          ? `The etcd members' TLS certificate is not trusted (${code}): it is not signed by a certificate authority this system trusts, so the connection was refused before anything was sent. If your team runs its own authority, name its certificate (a PEM file) in LOCKSTEP_ETCD_CA_FILE; otherwise check that the endpoints in LOCKSTEP_ETCD_ENDPOINTS are the members' own addresses (the certificate's subjectAltName must list them).`
          : `The etcd members' TLS certificate is not trusted (${code}): the certificate authority in ${timeouts.caFileName} (LOCKSTEP_ETCD_CA_FILE) did not sign it, so the connection was refused before anything was sent. Name the authority that signed the members' certificates in LOCKSTEP_ETCD_CA_FILE, and check that the certificate's subjectAltName lists the addresses in LOCKSTEP_ETCD_ENDPOINTS and that it has not expired.`,
        { cause },
      );
    case 'client-certificate':
      return new LockTlsError(
        'etcd',
        'client',
        `The etcd members refused this client's TLS certificate (${code}): they require a client certificate (etcd's --client-cert-auth) signed by the authority they trust. Name this client's certificate and private key (PEM files) in LOCKSTEP_ETCD_CERT_FILE and LOCKSTEP_ETCD_KEY_FILE, signed by the authority in the members' --trusted-ca-file.`,
        { cause },
      );
    case 'unreachable':
      return new LockBackendError(
        'etcd',
        `No etcd member answered (${code}) within the connect timeout (${timeouts.connectTimeoutMs} ms). Check that the cluster runs and that LOCKSTEP_ETCD_ENDPOINTS (or the etcdEndpoints setting) lists its client URLs; Lockstep does not switch to another driver.`,
        { cause },
      );
    case 'closed':
      return new LockBackendError(
        'etcd',
        'The etcd connection was closed by this process before the operation ran. Open the manager again.',
        {
          cause,
          retryable: false,
        },
      );
    case 'refused':
      if (code === 'TOO-LARGE')
        return new LockStorageError('etcd', 'etcd refused a value larger than its request limit; nothing was stored.', { cause });
      return new LockBackendError('etcd', `etcd refused the operation (${code}). Check the cluster's health and logs, then try again.`, {
        cause,
      });
  }
}

/** A short, credential-free code for an etcd client error, and what kind of failure it is. */
export function classifyEtcdError(error: unknown): { kind: EtcdFailureKind; code: string } {
  if (!(error instanceof Error)) return { kind: 'unreachable', code: 'UNKNOWN' };
  const message = error.message;
  // By class (the production bundle renames classes, so never by their names), then by etcd's own words.
  if (/no leader|leader changed|request timed out|timed out waiting for read index|not capable|too many requests/i.test(message))
    return { kind: 'no-quorum', code: 'NO-LEADER' };
  if (
    error instanceof EtcdAuthenticationFailedError ||
    error instanceof EtcdUserNotFoundError ||
    /authentication failed|user name not found/i.test(message)
  )
    return { kind: 'authentication', code: 'AUTH-FAILED' };
  if (error instanceof GRPCUnauthenticatedError) return { kind: 'authentication', code: 'UNAUTHENTICATED' };
  if (/authentication is not enabled/i.test(message)) return { kind: 'authentication', code: 'AUTH-NOT-ENABLED' };
  if (error instanceof EtcdPermissionDeniedError || /permission denied/i.test(message))
    return { kind: 'permission', code: 'PERMISSION-DENIED' };
  if (error instanceof GRPCDeadlineExceededError || /deadline exceeded/i.test(message)) return { kind: 'timeout', code: 'DEADLINE' };
  if (error instanceof ClientClosedError) return { kind: 'closed', code: 'CLOSED' };
  if (/request is too large|message larger than max/i.test(message)) return { kind: 'refused', code: 'TOO-LARGE' };
  // A failed TLS handshake reaches here as UNAVAILABLE with Node's own words in the message (OpenSSL's verify errors).
  if (/certificate has expired|certificate is not yet valid/i.test(message)) return { kind: 'untrusted', code: 'CERTIFICATE-EXPIRED' };
  if (/does not match certificate's altnames|IP: \S+ is not in the cert's list/i.test(message))
    return { kind: 'untrusted', code: 'CERTIFICATE-NAME-MISMATCH' };
  if (
    /unable to verify the first certificate|self[- ]signed certificate|unable to get (local )?issuer certificate|certificate signature failure/i.test(
      message,
    )
  )
    return { kind: 'untrusted', code: 'UNTRUSTED-CERTIFICATE' };
  if (/alert bad certificate|alert certificate required|alert unknown ca|alert certificate unknown/i.test(message))
    return { kind: 'client-certificate', code: 'CLIENT-CERTIFICATE-REFUSED' };
  if (error instanceof GRPCUnavailableError || /unavailable|no connection established|breaker is open/i.test(message))
    return { kind: 'unreachable', code: 'UNAVAILABLE' };
  if (error instanceof EtcdError) return { kind: 'refused', code: 'SERVER-ERROR' };
  return { kind: 'unreachable', code: 'DISCONNECTED' };
}
