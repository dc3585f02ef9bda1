import { LockConfigurationError } from '../../errors';

/**
 * What a Redis URL points at, parsed once and never echoed (it may hold a password):
 *
 *   redis://[user:password@]host[:port][/db]              one server (rediss:// for TLS)
 *   redis-sentinel://[user:password@]h1:p1,h2:p2/master[?db=N]   a master found through Sentinel
 *   redis-cluster://[user:password@]h1:p1,h2:p2           a Redis Cluster (at least two seed nodes)
 *
 * The user and password of the multi-host forms are those of the data nodes (master, replicas,
 * cluster nodes); the sentinels themselves are contacted without credentials.
 */
export type RedisTarget =
  | { readonly kind: 'standalone'; readonly url: string }
  | {
      readonly kind: 'sentinel';
      readonly sentinels: readonly HostPort[];
      readonly masterName: string;
      readonly db: number;
      readonly credentials: Credentials;
    }
  | { readonly kind: 'cluster'; readonly nodes: readonly HostPort[]; readonly credentials: Credentials };

export type DeploymentKind = RedisTarget['kind'];

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

export interface Credentials {
  readonly username?: string;
  readonly password?: string;
}

const SENTINEL_DEFAULT_PORT = 26379;
const REDIS_DEFAULT_PORT = 6379;

const FORMS =
  'redis://[user:password@]host[:port][/db] (rediss:// for TLS), ' +
  'redis-sentinel://[user:password@]host1:port1,host2:port2/mastername[?db=N] or ' +
  'redis-cluster://[user:password@]host1:port1,host2:port2';

/** Parses a Redis URL; a malformed one is a configuration error that never repeats the URL. */
export function parseRedisTarget(url: string): RedisTarget {
  const parts = splitUrl(url);
  if (!parts) throw invalid('it is not a URL');
  switch (parts.scheme) {
    case 'redis':
    case 'rediss':
      assertStandalone(url);
      return { kind: 'standalone', url };
    case 'redis-sentinel': {
      const sentinels = hostList(parts.hosts, SENTINEL_DEFAULT_PORT);
      const masterName = decodeURIComponent(parts.path.replace(/^\//, ''));
      if (masterName === '' || masterName.includes('/')) {
        throw invalid(
          "a Sentinel URL needs the master's name as its path (…/mastername), as the sentinels know it (`sentinel monitor NAME …`)",
        );
      }
      return { kind: 'sentinel', sentinels, masterName, db: sentinelDb(parts.query), credentials: credentials(parts.userinfo) };
    }
    case 'redis-cluster': {
      const nodes = hostList(parts.hosts, REDIS_DEFAULT_PORT);
      if (nodes.length < 2) {
        throw invalid(
          'a Cluster URL needs at least two seed nodes (host1:port1,host2:port2), so that one node being down does not stop Lockstep from finding the cluster',
        );
      }
      if (parts.path !== '' && parts.path !== '/') throw invalid('a Cluster URL has no path: a cluster has only database 0');
      return { kind: 'cluster', nodes, credentials: credentials(parts.userinfo) };
    }
    default:
      throw invalid('its scheme is not one Lockstep knows');
  }
}

/** The URL as it may be written into `.lockstep.json` or shown: no user, no password. */
export function redisUrlWithoutCredentials(url: string): string | undefined {
  const parts = splitUrl(url);
  if (!parts || (parts.scheme !== 'redis-sentinel' && parts.scheme !== 'redis-cluster')) return undefined;
  const db = /(?:^|&)db=(\d+)(?:&|$)/.exec(parts.query)?.[1];
  return `${parts.scheme}://${parts.hosts}${parts.path}${db !== undefined ? `?db=${db}` : ''}`;
}

interface UrlParts {
  readonly scheme: string;
  readonly userinfo: string | undefined;
  readonly hosts: string;
  readonly path: string;
  readonly query: string;
}

/** `scheme://[userinfo@]hosts[/path][?query]` — WHATWG URL cannot parse a comma-separated host list. */
function splitUrl(url: string): UrlParts | undefined {
  const match = /^([a-z][a-z0-9+.-]*):\/\/(?:([^@/?#]*)@)?([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?$/i.exec(url.trim());
  if (!match) return undefined;
  return { scheme: match[1]!.toLowerCase(), userinfo: match[2], hosts: match[3]!, path: match[4] ?? '', query: match[5] ?? '' };
}

function hostList(text: string, defaultPort: number): HostPort[] {
  if (text === '') throw invalid('it names no host');
  return text.split(',').map(entry => {
    const match = /^(\[[0-9a-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/i.exec(entry.trim());
    const port = match?.[2] === undefined ? defaultPort : Number(match[2]);
    if (!match || port < 1 || port > 65535) throw invalid('one of its hosts is not host:port');
    return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
  });
}

function credentials(userinfo: string | undefined): Credentials {
  if (userinfo === undefined || userinfo === '') return {};
  const colon = userinfo.indexOf(':');
  const user = decode(colon < 0 ? userinfo : userinfo.slice(0, colon));
  const password = colon < 0 ? undefined : decode(userinfo.slice(colon + 1));
  return { ...(user !== '' ? { username: user } : {}), ...(password !== undefined && password !== '' ? { password } : {}) };
}

function sentinelDb(query: string): number {
  if (query === '') return 0;
  const params = new URLSearchParams(query);
  for (const key of params.keys()) if (key !== 'db') throw invalid('a Sentinel URL takes only the query parameter db');
  const db = params.get('db') ?? '0';
  if (!/^\d{1,2}$/.test(db)) throw invalid('db must be a database number (0–15 on a default server)');
  return Number(db);
}

function assertStandalone(url: string): void {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    protocol = '';
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:') throw invalid('it is not a URL');
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw invalid('its user or password is not percent-encoded properly');
  }
}

function invalid(why: string): LockConfigurationError {
  return new LockConfigurationError(
    `The Redis URL is not usable: ${why}. Use ${FORMS}; check LOCKSTEP_REDIS_URL or the redisUrl setting.`,
    { setting: 'redisUrl' },
  );
}
