import * as path from 'node:path';
import { DEFAULT_REDIS_URL, type ResolvedConfig } from '../config';
import type { PageLocation } from '../errors';
import { DEFAULT_ETCD_ENDPOINTS, etcdEndpointsWithoutCredentials } from '../stores/etcd/etcdEndpoints';
import { redisUrlWithoutCredentials } from '../stores/redis/redisTarget';
import { DEFAULT_SQLITE_FILE } from '../stores/sql/databaseUrl';

/**
 * Which lock page a configuration points at, in words safe to print: the driver, the store's
 * location without credentials, the prefix and the container. `driverName` is the driver actually
 * opened (what `auto` decided), else the configured one.
 */
export function pageLocation(config: ResolvedConfig, container: string, driverName: string = config.driver): PageLocation {
  return { driver: driverName, location: storeLocation(config, driverName), prefix: config.prefix, container };
}

function storeLocation(config: ResolvedConfig, driver: string): string {
  switch (driver) {
    case 'file':
      return config.path;
    case 'redis':
      return withoutCredentials(config.redisUrl ?? DEFAULT_REDIS_URL);
    case 'sql':
      return config.databaseUrl ? withoutCredentials(config.databaseUrl) : `sqlite://${path.join(config.path, DEFAULT_SQLITE_FILE)}`;
    case 'etcd':
      return etcdEndpointsWithoutCredentials(config.etcdEndpoints ?? DEFAULT_ETCD_ENDPOINTS);
    case 'git':
      return `remote ${config.gitRemote}`;
    case 'memory':
      return "this process's memory";
    default:
      return 'a store chosen when first used (auto)';
  }
}

/**
 * A URL without user, password or query (query parameters may carry secrets too). Something that
 * does not parse is not shown at all: it might be a password-bearing string.
 */
export function withoutCredentials(url: string): string {
  // Sentinel and Cluster URLs list several hosts, which WHATWG URL cannot parse.
  const multiHost = redisUrlWithoutCredentials(url);
  if (multiHost !== undefined) return multiHost;
  try {
    const u = new URL(url.trim());
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(an unparsable URL)';
  }
}
