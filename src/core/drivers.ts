import type { ResolvedConfig } from './config';
import { createMemoryDriver } from './stores/memory';
import type { Driver } from './stores/store';

/**
 * Opens the configured driver. Called lazily, on first use, so that creating a manager opens no
 * file, socket or connection. `auto` is decided here, once per manager.
 */
export async function openDriver(config: ResolvedConfig): Promise<Driver> {
  const driver = await openPlainDriver(config);
  // A signed page (allowedSigners) on a store whose writers are all participants keeps its signed
  // chain in the stored value (stores/signedChainDriver.ts); the git driver signs its own commits.
  if (config.gitSigning !== 'required' || driver.name === 'git') return driver;
  const { SignedChainDriver } = await import('./stores/signedChainDriver');
  return new SignedChainDriver(driver, config.gitDir, config.gitOpenpgp);
}

async function openPlainDriver(config: ResolvedConfig): Promise<Driver> {
  switch (config.driver) {
    case 'memory':
      return createMemoryDriver();
    case 'file': {
      const { createFileDriver } = await import('./stores/file');
      return createFileDriver(config);
    }
    case 'auto': {
      // Probed once per manager (this runs once); an outage later never switches driver.
      const redis = await import('./stores/redis/redisDriver');
      if (await redis.redisAnswers(config)) return redis.createRedisDriver(config);
      const { createFileDriver } = await import('./stores/file');
      return createFileDriver(config);
    }
    case 'redis': {
      const { createRedisDriver } = await import('./stores/redis/redisDriver');
      return createRedisDriver(config);
    }
    case 'etcd': {
      const { createEtcdDriver } = await import('./stores/etcd/etcdDriver');
      return createEtcdDriver(config);
    }
    case 'sql': {
      const { openSqlDriver } = await import('./stores/sql/sqlDriver');
      return openSqlDriver(config);
    }
    case 'git': {
      const { createGitDriver } = await import('./stores/git/gitDriver');
      return createGitDriver(config);
    }
  }
}
