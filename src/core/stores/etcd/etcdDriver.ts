import { Etcd3, type IOptions } from 'etcd3';
import type { ResolvedConfig } from '../../config';
import { LockConfigurationError } from '../../errors';
import { CasDriver } from '../casDriver';
import type { DeploymentInfo } from '../store';
import { EtcdCells } from './etcdCells';
import { DEFAULT_ETCD_ENDPOINTS, parseEtcdEndpoints } from './etcdEndpoints';
import { EtcdFailures } from './etcdErrors';
import { readEtcdTls, tlsFileName } from './etcdTls';
import { unsentRetryPolicy } from './unsentRetry';

/**
 * The `etcd` driver: a store whose writes are committed by consensus (Raft), so that a grant, a fencing
 * token and a record change acknowledged once survive the loss of the leader — the property Redis with
 * `WAIT` narrows but cannot give.
 *
 * Both primitives are compare-and-swap on one key each (etcdCells.ts: a transaction on the key's
 * `mod_revision`), with the protocol in core (casDriver.ts, leaseState.ts):
 * - Container records: one key per page; live updates by an etcd watch on that key.
 * - Plain leases: one key per name holding `{counter, owner, expiresAt}`. The fencing token is that counter,
 *   incremented in the same transaction that takes the lease — not the claim's etcd revision: the revision
 *   is also strictly increasing, but it is the whole cluster's write count (it jumps with every other
 *   write, and restarts if the cluster is rebuilt from scratch while the counter can be carried across by
 *   `migrate`), and the counter gives every driver the same tokens 1, 2, 3… per name. Release keeps the
 *   key with its counter. Expiry compares with the caller's clock like the SQL and file drivers (etcd's own
 *   leases count whole seconds and are renewed on every leader change, and the seed's bounds go below a
 *   second); there is no automatic extension: a lease lives longer only by an explicit `extend`.
 *
 * An outage, a lost quorum, a timeout or refused credentials fail each operation with a typed
 * `LockBackendError` (etcdErrors.ts); the driver never falls back to another one.
 */
export class EtcdDriver extends CasDriver {
  readonly #client: Etcd3;
  readonly #failures: EtcdFailures;

  constructor(client: Etcd3, prefix: string, failures: EtcdFailures) {
    super('etcd', true, new EtcdCells(client, prefix, failures));
    this.#client = client;
    this.#failures = failures;
  }

  /** The cluster as its members report it now: how many, whether one leads, and the majority a write waits for. */
  describeDeployment(): Promise<DeploymentInfo> {
    return this.#failures.run(async () => {
      const [members, status] = await Promise.all([this.#client.cluster.memberList({}), this.#client.maintenance.status()]);
      const count = members.members.length;
      const quorum = Math.floor(count / 2) + 1;
      const leaderSeen = status.leader !== '0' && members.members.some(m => m.ID === status.leader);
      return {
        kind: 'etcd',
        masters: leaderSeen ? 1 : 0,
        replicas: Math.max(0, count - 1),
        minReplicas: quorum - 1,
        members: count,
        quorum,
        leaderSeen,
      };
    });
  }
}

/** Opens the `etcd` driver without connecting (the first operation connects). */
export function createEtcdDriver(config: ResolvedConfig): EtcdDriver {
  if (!config.prefixExplicit || config.prefix === '') {
    throw new LockConfigurationError(
      'The etcd driver is shared between machines, so it needs an explicit, stable prefix that all intended deployments share: set LOCKSTEP_PREFIX or the prefix setting.',
      { setting: 'prefix' },
    );
  }
  const { hosts, credentials } = parseEtcdEndpoints(config.etcdEndpoints ?? DEFAULT_ETCD_ENDPOINTS);
  // https:// endpoints: the CA bundle (and client certificate) named, else the system's authorities (etcd3's default).
  const tls = readEtcdTls(config, hosts[0]!.startsWith('https://'));
  const settings = {
    connectTimeoutMs: config.connectTimeoutMs,
    commandTimeoutMs: config.commandTimeoutMs,
    ...(config.etcdCaFile !== undefined ? { caFileName: tlsFileName(config.etcdCaFile) } : {}),
  };
  const options: IOptions = {
    hosts: [...hosts],
    dialTimeout: config.connectTimeoutMs,
    // Every call has a deadline: without a quorum etcd holds a write until it can commit it, and a command must not hang.
    defaultCallOptions: context => (context.isStream ? {} : { deadline: Date.now() + config.commandTimeoutMs }),
    // A call is tried on another member only when it was never sent (unsentRetry.ts): a write is never sent twice.
    faultHandling: { global: unsentRetryPolicy(hosts.length + 1) },
    ...(credentials ? { auth: { username: credentials.username, password: credentials.password } } : {}),
    ...(tls ? { credentials: { ...tls } } : {}),
  };
  return new EtcdDriver(new Etcd3(options), config.prefix, new EtcdFailures(settings));
}
