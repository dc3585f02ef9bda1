import * as fs from 'node:fs';
import { parseCommandArgs } from '../args';
import type { Command } from '../command';
import { installClientHooks, installServerHooks } from '../../core/hooks/install';

export const hooksInstallCommand: Command = {
  name: 'hooks install',
  summary: 'install the pre-push guard (or, with --server, the pre-receive guard)',
  help: `usage: lockstep hooks install [--server]

In a clone: writes a pre-push hook that runs \`lockstep guard pre-push\` (honours core.hooksPath;
an existing pre-push hook is kept and runs first; running it again is harmless).
With --server, in the shared bare repository: writes a pre-receive hook that runs
\`lockstep guard pre-receive\`, sets receive.advertisePushOptions, and saves the LOCKSTEP_*
backend settings of this shell in hooks/lockstep.env (mode 0600) for the guard.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { server: { type: 'boolean' } });
    const paths = { node: process.execPath, cli: fs.realpathSync(process.argv[1] ?? __filename) };
    const installed = values.server
      ? await installServerHooks(context.cwd, paths, context.env)
      : await installClientHooks(context.cwd, paths);
    context.out.result([
      `${installed.updated ? 'Updated' : 'Installed'} ${installed.hook}.`,
      ...(installed.chained ? [`The hook that was there before runs first: ${installed.chained}.`] : []),
    ], { hook: installed.hook, chained: installed.chained ?? null, updated: installed.updated });
    return 0;
  },
};
