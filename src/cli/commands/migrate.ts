import {
  CONTAINER_FILE,
  containerConfig,
  createLockManager,
  driverOptions,
  type LockManagerOptions,
  openClone,
  readContainerFile,
} from '../../core/application';
import { parseCommandArgs } from '../args';
import type { Command } from '../command';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const migrateCommand: Command = {
  name: 'migrate',
  summary: "create the SQL driver's table (harmless to run twice)",
  help: `usage: lockstep migrate

Creates the reliability_locks table of the sql driver. In a container it uses the committed
settings of ${CONTAINER_FILE}: the environment supplies credentials only, and one that points at
another database or prefix is refused (exit 5); elsewhere
LOCKSTEP_DRIVER=sql and LOCKSTEP_DATABASE_URL=postgres://… | mysql://… | mariadb://… |
sqlite:///abs/file.db. Running it again changes nothing. Other drivers have nothing to migrate
(exit 2). \`lockstep init\` with the sql driver migrates by itself.`,

  async run(context) {
    parseCommandArgs(context.args, {});
    const manager = createLockManager({ ...(await containerOptions(context.cwd, context.env)), env: context.env });
    try {
      await manager.migrate();
      context.out.result('The reliability_locks table is ready.', { migrated: true });
      return 0;
    } finally {
      await manager.close();
    }
  },
};

/**
 * The committed driver settings when `cwd` is in a container, else none. In a container the
 * environment supplies credentials only: one pointing at another database or prefix is refused
 * (exit 5), as in every other command.
 */
async function containerOptions(cwd: string, env: NodeJS.ProcessEnv): Promise<LockManagerOptions> {
  const clone = await openClone(cwd).catch(() => undefined);
  if (clone === undefined || !fs.existsSync(path.join(clone.root, CONTAINER_FILE))) return {};
  const file = readContainerFile(clone.root);
  containerConfig(file, clone.root, env);
  return driverOptions(file, clone.root);
}
