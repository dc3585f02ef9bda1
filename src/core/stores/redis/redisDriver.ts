import type { ResolvedConfig } from '../../config';
import { LockConfigurationError, LockReplicationError } from '../../errors';
import type {
  CasMeta,
  CasResult,
  ClaimResult,
  DeploymentInfo,
  Driver,
  ReleaseResult,
  VersionedRecord,
  Watch,
  WatchOptions,
} from '../store';
import { DEFAULT_REDIS_URL, RedisConnection } from './connection';
import { defaultMinReplicas, deploymentInfo, nodesFromClusterNodes, replicasFromInfo } from './deployment';
import { redisKeys, type RedisKeys } from './keys';
import { claimLease, extendLease, releaseLease } from './leaseScripts';
import { compareAndSwapRecord, readRecord } from './recordScripts';
import { ReplicaWaitingClient, replicaWaitMs, type ReplicaBound } from './replicaWait';
import { RecordWatcher } from './watcher';

/**
 * The `redis` driver: every operation is one round trip (a Lua script or a single read), keys are
 * `<prefix>:<kind>:<digest>`, and record changes are announced over pub/sub. An outage fails each
 * operation with `LockBackendError`; the driver never falls back to another one.
 *
 * On one server, a Sentinel-managed master or a Cluster alike. With `minReplicas` > 0 every grant
 * (a claim's fencing token) and every record write is followed, in the same round trip, by `WAIT`;
 * too few acknowledgements fail the operation with {@link LockReplicationError}, and a claimed
 * lease is released again where possible.
 */
export class RedisDriver implements Driver {
  readonly name = 'redis';
  readonly distributed = true;
  private readonly keys: RedisKeys;
  /** Null when no write waits for replicas. */
  private readonly replicaBound: ReplicaBound | null;
  #watcher: RecordWatcher | undefined;
  private closed = false;
  /** Private, so that printing the driver never shows the connection's URL or password. */
  readonly #connection: RedisConnection;

  constructor(connection: RedisConnection, prefix: string, minReplicas: number = defaultMinReplicas(connection.kind)) {
    this.#connection = connection;
    this.keys = redisKeys(prefix, { hashTags: connection.kind === 'cluster' });
    this.replicaBound = minReplicas > 0 ? { replicas: minReplicas, timeoutMs: replicaWaitMs(connection.timeouts.commandTimeoutMs) } : null;
  }

  claim(key: string, ownerHash: string, ttlMs: number, now: number): Promise<ClaimResult> {
    const lease = this.keys.lease(key);
    const fence = this.keys.fence(key);
    const bound = this.replicaBound;
    if (!bound) return this.#connection.run(client => claimLease(client, lease, fence, ownerHash, wholeMs(ttlMs), now));
    return this.#connection.run(async client => {
      const waiting = new ReplicaWaitingClient(client, bound);
      const result = await claimLease(waiting, lease, fence, ownerHash, wholeMs(ttlMs), now);
      if (!result.claimed || (waiting.acknowledged ?? 0) >= bound.replicas) return result;
      // Not safely granted: give the lease back if Redis lets us (its token stays used), then say so.
      await releaseLease(client, lease, ownerHash).catch(() => undefined);
      throw replicationError(waiting.acknowledged ?? 0, bound, 'The lease was not granted (and was released again where possible)');
    });
  }

  extend(key: string, ownerHash: string, ttlMs: number, _now: number): Promise<boolean> {
    const lease = this.keys.lease(key);
    return this.#connection.run(client => extendLease(client, lease, ownerHash, wholeMs(ttlMs)));
  }

  release(key: string, ownerHash: string, _now: number): Promise<ReleaseResult> {
    const lease = this.keys.lease(key);
    return this.#connection.run(client => releaseLease(client, lease, ownerHash));
  }

  read(key: string): Promise<VersionedRecord | null> {
    const record = this.keys.record(key);
    return this.#connection.run(client => readRecord(client, record));
  }

  compareAndSwap(key: string, expectedRevision: string | null, next: unknown, _meta: CasMeta): Promise<CasResult> {
    const record = this.keys.record(key);
    const channel = this.keys.recordChannel(key);
    const bound = this.replicaBound;
    if (!bound) return this.#connection.run(client => compareAndSwapRecord(client, record, channel, expectedRevision, next));
    return this.#connection.run(async client => {
      const waiting = new ReplicaWaitingClient(client, bound);
      const result = await compareAndSwapRecord(waiting, record, channel, expectedRevision, next);
      if (!result.ok || (waiting.acknowledged ?? 0) >= bound.replicas) return result;
      throw replicationError(
        waiting.acknowledged ?? 0,
        bound,
        'The record change is on the master but not confirmed by enough replicas, so a failover may undo it; `lockstep status` shows what holds now',
      );
    });
  }

  watch(key: string, onChange: () => void, options?: WatchOptions): Watch {
    const channel = this.keys.recordChannel(key);
    if (this.closed) return { dispose: () => undefined };
    this.#watcher ??= new RecordWatcher(this.#connection.createSubscriber());
    return this.#watcher.watch(channel, onChange, options?.onHealth);
  }

  /** One server, Sentinel or Cluster, the masters and replicas Redis reports now, and the `WAIT` bound. */
  describeDeployment(): Promise<DeploymentInfo> {
    const kind = this.#connection.kind;
    const minReplicas = this.replicaBound?.replicas ?? 0;
    return this.#connection.run(async client => {
      if (kind === 'cluster')
        return deploymentInfo(kind, nodesFromClusterNodes(String(await client.call('CLUSTER', 'NODES'))), minReplicas);
      return deploymentInfo(kind, { masters: 1, replicas: replicasFromInfo(await client.info('replication')) }, minReplicas);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.#watcher?.close();
    this.#connection.close();
  }
}

function replicationError(acknowledged: number, bound: ReplicaBound, what: string): LockReplicationError {
  return new LockReplicationError(
    'redis',
    acknowledged,
    bound.replicas,
    `${what}: ${acknowledged} of the required ${bound.replicas} Redis replica(s) acknowledged it within ${bound.timeoutMs} ms (WAIT). ` +
      'Check that the replicas are up and connected to the master (`lockstep status` shows the replicas seen), or lower LOCKSTEP_REDIS_MIN_REPLICAS (the redisMinReplicas setting) knowing that a failover may then lose grants.',
  );
}

/** Redis takes whole milliseconds; rounding up never shortens a lease. */
function wholeMs(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}

/** Opens the `redis` driver without connecting (the first operation connects). */
export function createRedisDriver(config: ResolvedConfig): RedisDriver {
  if (!config.prefixExplicit || config.prefix === '') {
    throw new LockConfigurationError(
      'The redis driver is shared between machines, so it needs an explicit, stable prefix that all intended deployments share: set LOCKSTEP_PREFIX or the prefix setting.',
      { setting: 'prefix' },
    );
  }
  const connection = new RedisConnection({
    url: config.redisUrl ?? DEFAULT_REDIS_URL,
    connectTimeoutMs: config.connectTimeoutMs,
    commandTimeoutMs: config.commandTimeoutMs,
  });
  return new RedisDriver(connection, config.prefix, config.redisMinReplicas ?? defaultMinReplicas(connection.kind));
}

/** The longest the `auto` probe waits for Redis before choosing the file driver. */
export const AUTO_PROBE_TIMEOUT_MS = 500;

/**
 * `auto`: true when Redis answers PING at LOCKSTEP_REDIS_URL (or the default local address) within
 * a short timeout. Called once per manager; the answer holds for the manager's lifetime.
 */
export async function redisAnswers(config: ResolvedConfig): Promise<boolean> {
  const timeout = Math.min(config.connectTimeoutMs, AUTO_PROBE_TIMEOUT_MS);
  const probe = new RedisConnection({
    url: config.redisUrl ?? DEFAULT_REDIS_URL,
    connectTimeoutMs: timeout,
    commandTimeoutMs: timeout,
    connectionName: 'lockstep-probe',
    reconnect: false,
  });
  try {
    await probe.run(client => client.ping());
    return true;
  } catch {
    return false;
  } finally {
    probe.close();
  }
}
