import { createLockManager } from '../../core/leases';
import { parseCommandArgs } from '../args';
import type { Command } from '../command';

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'create the SQL driver\'s table (harmless to run twice)',
  help: `usage: lockstep migrate

Creates the reliability_locks table of the sql driver (LOCKSTEP_DRIVER=sql,
LOCKSTEP_DATABASE_URL=postgres://… | mysql://… | mariadb://… | sqlite:///abs/file.db).
Running it again changes nothing. Other drivers have nothing to migrate (exit 2).`,

  async run(context) {
    parseCommandArgs(context.args, {});
    const manager = createLockManager({ env: context.env });
    try {
      await manager.migrate();
      context.out.result('The reliability_locks table is ready.', { migrated: true });
      return 0;
    } finally {
      await manager.close();
    }
  },
};
