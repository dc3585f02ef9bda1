import * as fs from 'node:fs';
import * as path from 'node:path';
import { LockConfigurationError, LockRefusedError } from '../errors';
import { FORGE_FILES, forgeFile, type Forge } from './forgeTemplates';

/**
 * `lockstep forge init github|gitlab`: writes the forge's ready-made check into the repository.
 * Never overwrites: an existing file (a user's own, or an earlier one) is refused with what to do.
 */
export function writeForgeCheck(root: string, forge: Forge, version: string): { file: string } {
  const relative = FORGE_FILES[forge];
  const target = path.join(root, relative);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  try {
    // O_EXCL: created here or refused, also when a link or anything else already has the name.
    fs.writeFileSync(target, forgeFile(forge, version), { flag: 'wx', mode: 0o644 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new LockRefusedError(
        'invalid-request',
        `${relative} exists already; forge init never overwrites a file. Compare it with docs/forges/ (or remove it) and run forge init again.`,
      );
    }
    throw new LockConfigurationError(`${relative} could not be written; check that you may write to the repository.`, {
      setting: 'forge',
      cause: error,
    });
  }
  return { file: relative };
}
