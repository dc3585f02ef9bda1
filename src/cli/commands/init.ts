import { CONTAINER_FILE, describePage, type DriverSetting, initContainer } from '../../core/application';
import { parseCommandArgs } from '../args';
import type { Command } from '../command';

export const initCommand: Command = {
  name: 'init',
  summary: 'make this repository a container (writes .lockstep.json)',
  help: `usage: lockstep init [--driver D] [--operator WHO]… [--protect BRANCH]… [--remote NAME] [--server-guard]

Writes .lockstep.json at the repository root with a new container UUID and its settings, and
creates the container's lock page in the store. Commit the file: it fixes which page every clone
reads — the driver, the prefix and the store's location (path for the file driver, the URL without
credentials for redis and sql, the endpoints for etcd, the remote for git), taken from LOCKSTEP_*
where set. From then on LOCKSTEP_* may add only credentials; pointing elsewhere is exit 5.
Credentials stay in each machine's environment.

  --driver D        file (default, or LOCKSTEP_DRIVER), redis, etcd, sql, git; auto is decided now and
                    the driver it picks is written
  --operator WHO    an identity allowed to clear a silent lock (repeatable; default: you)
  --protect BRANCH  a branch whose landing is fenced (repeatable; default: the remote's default branch)
  --remote NAME     the shared remote (default origin)
  --server-guard    the remote runs \`lockstep guard pre-receive\`: pushes carry a proof of grant

Refused (exit 2, nothing written): a repository inside another container's work tree; one
without the shared remote (add it: git remote add origin URL); and a clone whose remote's default
branch already has ${CONTAINER_FILE} — a teammate made it a container: pull it (git pull) instead.
init fetches that branch to know (exit 4 when the remote cannot be reached).`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, {
      driver: { type: 'string' },
      operator: { type: 'string', multiple: true },
      protect: { type: 'string', multiple: true },
      remote: { type: 'string' },
      'server-guard': { type: 'boolean' },
    });
    const { file, path, page } = await initContainer(context.cwd, {
      env: context.env,
      ...(values.driver !== undefined ? { driver: values.driver as DriverSetting } : {}),
      ...(values.operator ? { operators: values.operator } : {}),
      ...(values.protect ? { protectedBranches: values.protect } : {}),
      ...(values.remote !== undefined ? { remote: values.remote } : {}),
      serverGuard: values['server-guard'] ?? false,
    });
    context.out.result(
      [
        `Initialised container ${file.container} (protected: ${file.protectedBranches.join(', ')}; operators: ${file.operators.join(', ')}).`,
        `Its lock page: ${describePage(page)}.`,
        `Commit ${CONTAINER_FILE}, then run \`lockstep hooks install\` in each clone.`,
      ],
      { container: file.container, file: path, settings: file, page },
    );
    return 0;
  },
};
