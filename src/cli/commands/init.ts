import * as fs from 'node:fs';
import * as path from 'node:path';
import { DRIVER_SETTINGS, type DriverSetting } from '../../core/config';
import { defaultBranch, openClone, resolveIdentity } from '../../core/container/clone';
import { CONTAINER_FILE, newContainerFile, writeContainerFile } from '../../core/container/containerFile';
import { LockConfigurationError } from '../../core/errors';
import { parseCommandArgs } from '../args';
import type { Command } from '../command';

export const initCommand: Command = {
  name: 'init',
  summary: 'make this repository a container (writes .lockstep.json)',
  help: `usage: lockstep init [--driver D] [--operator WHO]… [--protect BRANCH]… [--remote NAME] [--server-guard]

Writes .lockstep.json at the repository root with a new container UUID and its settings. Commit it.

  --driver D        file (default), memory, redis, sql, git or auto
  --operator WHO    an identity allowed to clear a silent lock (repeatable; default: you)
  --protect BRANCH  a branch whose landing is fenced (repeatable; default: the remote's default branch)
  --remote NAME     the shared remote (default origin)
  --server-guard    the remote runs \`lockstep guard pre-receive\`: pushes carry a proof of grant`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, {
      driver: { type: 'string' }, operator: { type: 'string', multiple: true }, protect: { type: 'string', multiple: true },
      remote: { type: 'string' }, 'server-guard': { type: 'boolean' },
    });
    const clone = await openClone(context.cwd);
    if (fs.existsSync(path.join(clone.root, CONTAINER_FILE))) {
      throw new LockConfigurationError(`${CONTAINER_FILE} exists already: this repository is a container. Edit the file to change its settings.`, { setting: CONTAINER_FILE });
    }
    const driver = (values.driver ?? 'file') as DriverSetting;
    if (!DRIVER_SETTINGS.includes(driver)) {
      throw new LockConfigurationError(`--driver must be one of ${DRIVER_SETTINGS.join(', ')}.`, { setting: 'driver' });
    }
    const remote = values.remote ?? 'origin';
    const operators = values.operator ?? [await resolveIdentity(clone, context.env)];
    const branches = values.protect ?? [await defaultBranch(clone, remote)];
    const file = newContainerFile(branches, operators, { driver, remote, serverGuard: values['server-guard'] ?? false });
    writeContainerFile(clone.root, file);
    context.out.result([
      `Initialised container ${file.container} (driver ${driver}; protected: ${branches.join(', ')}; operators: ${operators.join(', ')}).`,
      `Commit ${CONTAINER_FILE}, then run \`lockstep hooks install\` in each clone.`,
    ], { container: file.container, file: path.join(clone.root, CONTAINER_FILE), settings: file });
    return 0;
  },
};
