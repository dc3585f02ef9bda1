import type { ResolvedConfig } from './config';
import { LockConfigurationError } from './errors';
import { createMemoryDriver } from './stores/memory';
import type { Driver } from './stores/store';

/**
 * Opens the configured driver. Called lazily, on first use, so that creating a manager opens no
 * file, socket or connection. `auto` is decided here, once per manager.
 */
export async function openDriver(config: ResolvedConfig): Promise<Driver> {
  switch (config.driver) {
    case 'memory':
      return createMemoryDriver();
    case 'file': {
      const { createFileDriver } = await import('./stores/file');
      return createFileDriver(config);
    }
    case 'auto': {
      const { createFileDriver } = await import('./stores/file');
      return createFileDriver(config);
    }
    case 'sql': {
      const { openSqlDriver } = await import('./stores/sql/sqlDriver');
      return openSqlDriver(config);
    }
    case 'git': {
      const { createGitDriver } = await import('./stores/git/gitDriver');
      return createGitDriver(config);
    }
    case 'redis':
      throw new LockConfigurationError(
        `The ${config.driver} driver is not available in this version of Lockstep; use file or memory.`,
        { setting: 'driver' });
  }
}
