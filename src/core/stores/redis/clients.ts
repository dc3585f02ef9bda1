import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisTarget } from './redisTarget';

/** An ioredis client of any deployment: one server or a Sentinel-managed master (`Redis`), or a `Cluster`. */
export type RedisClient = Redis | Cluster;

/** Lockstep's failure policy, the same for every deployment (connection.ts explains it). */
export interface ClientPolicy {
  readonly connectTimeoutMs: number;
  readonly commandTimeoutMs: number;
  readonly connectionName: string;
  /** Keep reconnecting after a failure (drivers), or give up after the first (the `auto` probe). */
  readonly reconnect: boolean;
}

/** Reconnect in the background, quickly, so that a restarted server or a new master is picked up by the next operation. */
function retry(policy: ClientPolicy): (times: number) => number | null {
  return policy.reconnect ? times => Math.min(50 * times, 500) : () => null;
}

function nodeOptions(policy: ClientPolicy): RedisOptions {
  return {
    lazyConnect: true,
    connectTimeout: policy.connectTimeoutMs,
    commandTimeout: policy.commandTimeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectionName: policy.connectionName,
    retryStrategy: retry(policy),
  };
}

/** Creates (never connects) the client for `target`. Its options hold the password: never print them. */
export function createClient(target: RedisTarget, policy: ClientPolicy, overrides: RedisOptions = {}): RedisClient {
  switch (target.kind) {
    case 'standalone':
      return new Redis(target.url, { ...nodeOptions(policy), ...overrides });
    case 'sentinel':
      return new Redis({
        ...nodeOptions(policy),
        ...overrides,
        sentinels: target.sentinels.map(s => ({ host: s.host, port: s.port })),
        name: target.masterName,
        role: 'master',
        db: target.db,
        ...target.credentials,
        sentinelRetryStrategy: retry(policy),
        sentinelCommandTimeout: policy.commandTimeoutMs,
        // Subscribe to the sentinels' +switch-master, so a failover is followed without waiting for an error.
        failoverDetector: true,
      });
    case 'cluster':
      return new Cluster(
        target.nodes.map(n => ({ host: n.host, port: n.port })),
        clusterOptions(policy, target.credentials, overrides),
      );
  }
}

function clusterOptions(
  policy: ClientPolicy,
  credentials: { username?: string; password?: string },
  overrides: RedisOptions,
): ClusterOptions {
  const retryCluster = retry(policy);
  return {
    lazyConnect: overrides.lazyConnect ?? true,
    enableOfflineQueue: overrides.enableOfflineQueue ?? false,
    // Writes and reads go to masters: a replica may lag behind.
    scaleReads: 'master',
    clusterRetryStrategy: times => retryCluster(times),
    slotsRefreshTimeout: policy.connectTimeoutMs,
    // After a MOVED or a lost node, ask again soon: a failover moves slots to a promoted replica.
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    redisOptions: { ...nodeOptions(policy), ...credentials, ...overrides },
  };
}

/**
 * A second client to the same deployment for pub/sub (a subscribed connection can do nothing else):
 * subscriptions wait for the connection instead of failing, and are sent again after a reconnection.
 */
export function createSubscriber(target: RedisTarget, policy: ClientPolicy): RedisClient {
  // A cluster's PUBLISH reaches every node, so one subscriber connection hears every channel.
  return createClient(
    target,
    { ...policy, connectionName: 'lockstep-watch', reconnect: true },
    {
      lazyConnect: false,
      enableOfflineQueue: true,
      autoResubscribe: true,
      commandTimeout: undefined,
      maxRetriesPerRequest: null,
    },
  );
}
