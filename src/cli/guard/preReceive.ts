import { simpleGit } from 'simple-git';
import { readContainerRecord } from '../../core/container/container';
import { withDefaults, type ContainerFile } from '../../core/container/containerFile';
import { LockError, LockFencedError } from '../../core/errors';
import { fenceServerPush, pushOptionsFromEnv } from '../../core/fencing';
import type { LockRecord } from '../../core/lockRecord';
import type { CommandContext } from '../command';
import { parsePreReceive, readStdin, ZERO_SHA } from './hookInput';
import { checkLockRefUpdate } from './lockRefs';

/**
 * `lockstep guard pre-receive` (the shared remote's hook): the real fence. Every update of a
 * protected branch must carry push options that prove the current, live grant. The container's
 * settings come from the branch as it was before the push, so a push cannot unprotect itself.
 * Fails closed on a damaged record or an unreachable backend.
 */
export async function guardPreReceive(context: CommandContext): Promise<number> {
  const updates = parsePreReceive(await readStdin());
  const repo = context.cwd;
  const git = simpleGit({ baseDir: repo });
  const records = new Map<string, LockRecord>();
  const pushed = pushOptionsFromEnv(context.env);

  for (const update of updates) {
    if (update.ref.startsWith('refs/lockstep/')) {
      const problem = await checkLockRefUpdate(git, update);
      if (problem) throw new LockFencedError(`refused ${update.ref}: ${problem}`, 0);
      continue;
    }
    if (!update.ref.startsWith('refs/heads/')) continue;
    const source = ZERO_SHA.test(update.oldSha) ? update.newSha : update.oldSha;
    const file = await containerFileAt(git, source);
    if (file === undefined) continue; // not a container on this branch: nothing to guard
    const branch = update.ref.slice('refs/heads/'.length);
    if (!file.protectedBranches.includes(branch)) continue;

    let record = records.get(file.container);
    if (record === undefined) {
      try {
        // On the server, the git driver's "remote" is this very repository ('.': read refs in place).
        record = await readContainerRecord(file, repo, context.env, { gitDir: repo, gitRemote: '.' });
      } catch (error) {
        const why = error instanceof LockError ? error.message : 'unexpected failure';
        throw new LockFencedError(`${update.ref} is protected and the lock could not be checked, so the push is refused — ${why}`, 0, pushed.grant, { cause: error });
      }
      records.set(file.container, record);
    }
    const verdict = fenceServerPush(record, pushed, Date.now());
    if (verdict) {
      throw new LockFencedError(`refused ${update.ref}: ${verdict.message}`, verdict.currentGrant, verdict.presentedGrant);
    }
  }
  return 0;
}

async function containerFileAt(git: ReturnType<typeof simpleGit>, sha: string): Promise<ContainerFile | undefined> {
  if (ZERO_SHA.test(sha)) return undefined;
  const text = await git.raw(['cat-file', 'blob', `${sha}:.lockstep.json`]).catch(() => '');
  if (!text) return undefined;
  try {
    const raw = JSON.parse(text) as Partial<ContainerFile>;
    if (typeof raw.container !== 'string') return undefined;
    return withDefaults(raw);
  } catch {
    return undefined;
  }
}
