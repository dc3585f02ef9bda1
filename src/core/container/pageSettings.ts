import { resolveConfig, type LockManagerOptions, type ResolvedConfig } from '../config';
import { LockNoPageError, type PageLocation } from '../errors';
import { keyDigest } from '../names';
import { driverOptions, type ContainerFile } from './containerFile';
import { pageLocation } from './pageLocation';

/**
 * Which lock page a container's settings open, and with what store settings: the clone (`Container`), the
 * server guard, `verify` and `migrate` all resolve them here, so that every reader opens the one page that
 * `.lockstep.json` names.
 */

export type Env = Readonly<Record<string, string | undefined>>;

/** Where `.lockstep.json` alone (no environment, no editor settings) puts the container's page. */
export function committedPage(file: ContainerFile, root: string, overrides: LockManagerOptions = {}): Omit<PageLocation, 'container'> {
  const { container: _, ...where } = pageLocation(resolveConfig({ ...driverOptions(file, root), ...overrides }, {}), file.container);
  return where;
}

/**
 * The store settings a clone opens its container's page with. `.lockstep.json` says which page it
 * is — driver, prefix, store location (file folder, Redis or database URL without credentials, etcd
 * endpoints, git remote); the environment and editor settings (`overrides`) supply credentials and machine-local
 * details only. One that points elsewhere is refused with {@link LockNoPageError} (exit 5) before
 * any store is opened: followed, it would read — or, with `adopt`, create — a second page.
 */
export function containerConfig(file: ContainerFile, root: string, env: Env, overrides: LockManagerOptions = {}): ResolvedConfig {
  const options = driverOptions(file, root);
  const config = resolveConfig({ ...options, ...overrides }, env);
  const committedConfig = resolveConfig(options, {});
  const page = pageLocation(config, file.container);
  const { container: _, ...committed } = pageLocation(committedConfig, file.container);
  const mismatch = pointingAway(committed, page, env);
  if (mismatch.length > 0) throw new LockNoPageError(page, committed, { mismatch });
  return config;
}

/** Which settings move the page away from the committed one: a variable's name, else the option's. */
function pointingAway(committed: Omit<PageLocation, 'container'>, page: PageLocation, env: Env): string[] {
  const named = (variable: string, option: string) => ((env[variable] ?? '') !== '' ? variable : `the ${option} setting`);
  const away: string[] = [];
  if (page.driver !== committed.driver) return [named('LOCKSTEP_DRIVER', 'driver')];
  if (page.prefix !== committed.prefix) away.push(named('LOCKSTEP_PREFIX', 'prefix'));
  if (page.location !== committed.location) {
    switch (page.driver) {
      case 'file':
        away.push(named('LOCKSTEP_PATH', 'path'));
        break;
      case 'redis':
        away.push(named('LOCKSTEP_REDIS_URL', 'redisUrl'));
        break;
      case 'sql':
        away.push(
          (env.LOCKSTEP_DATABASE_URL ?? '') === '' && (env.LOCKSTEP_PATH ?? '') !== ''
            ? 'LOCKSTEP_PATH'
            : named('LOCKSTEP_DATABASE_URL', 'databaseUrl'),
        );
        break;
      case 'etcd':
        away.push(named('LOCKSTEP_ETCD_ENDPOINTS', 'etcdEndpoints'));
        break;
      case 'git':
        away.push(named('LOCKSTEP_GIT_REMOTE', 'gitRemote'));
        break;
      default:
        away.push('the environment');
    }
  }
  return away;
}

/** The record's key in the store: a digest, never the container's id in clear. */
export function containerKey(prefix: string, container: string): string {
  return keyDigest(prefix, `container:${container}`);
}
