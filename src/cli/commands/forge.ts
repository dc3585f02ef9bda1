import { type Forge, FORGE_FILES, LockConfigurationError, openClone, writeForgeCheck } from '../../core/application';
import { parseCommandArgs } from '../args';
import type { Command } from '../command';
import { version } from '../../../package.json';

/** The package's version: only this field of package.json is bundled (a named import of JSON). */
const VERSION: string = version;

export const forgeInitCommand: Command = {
  name: 'forge init',
  summary: 'write the ready-made check for a forge without server hooks (github | gitlab)',
  help: `usage: lockstep forge init github|gitlab

Writes the required check that runs lockstep verify on every push and pull/merge request:
  github   ${FORGE_FILES.github}
  gitlab   ${FORGE_FILES.gitlab} (include it from .gitlab-ci.yml)
Refuses (exit 1) when the file exists: it never overwrites. Commit the file, then set the branch
protection the README describes (required status check, no bypass).`,

  async run(context) {
    const { positionals } = parseCommandArgs(context.args, {}, true);
    const forge = positionals[0];
    if (positionals.length !== 1 || (forge !== 'github' && forge !== 'gitlab')) {
      throw new LockConfigurationError('Say which forge: lockstep forge init github, or lockstep forge init gitlab.', { setting: 'forge' });
    }
    const clone = await openClone(context.cwd);
    const { file } = writeForgeCheck(clone.root, forge as Forge, VERSION);
    const next = forge === 'gitlab' ? ` Include it from .gitlab-ci.yml (include: - local: ${file}),` : '';
    context.out.result(
      `Wrote ${file}.${next} Commit it, then make it a required check of the protected branch with no bypass (README: Forges without server hooks).`,
      { file, forge },
    );
    return 0;
  },
};
