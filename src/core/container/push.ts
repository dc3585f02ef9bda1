import type { Container } from './container';
import { LockBackendError, LockRefusedError } from '../errors';
import { failure } from '../git/gitError';
import { explainPushFailure, type PushFailure } from '../git/pushFailure';

/**
 * Pushes the protected branch to the shared remote (VS Code's Push and Release, `lockstep release
 * --push`). The pre-push guard (when installed) and the server's guard check the grant on the way;
 * a refusal comes back as a 'not-landed' refusal with git's reason and its next step (pushFailure.ts).
 */
export async function pushProtectedBranch(container: Container): Promise<{ branch: string; remote: string }> {
  const where = await prepareLanding(container);
  await pushWithGit(container, where);
  return where;
}

/**
 * What comes before any push of the protected branch, whoever sends it (git here, or VS Code's git
 * extension): HEAD is the protected branch, nothing tracked is uncommitted, and the landing is
 * announced on the page where the container asks for announcements. `announce: false` leaves the
 * announcement to this clone's pre-push hook, which makes it during the push itself with the remote's
 * tip as git learned it there: nothing asks the remote beforehand, so a remote that needs credentials
 * (VS Code's askpass) is asked once, by the push.
 */
export async function prepareLanding(
  container: Container,
  options: { announce?: boolean } = {},
): Promise<{ branch: string; remote: string }> {
  const branch = container.file.protectedBranches[0] ?? 'main';
  const remote = container.file.remote;
  const git = container.clone.git;
  const current = (await git.raw(['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(() => '')).trim();
  if (current !== branch) {
    throw new LockRefusedError(
      'not-landed',
      `You are on ${current || 'a detached HEAD'}; the lock's work lands on ${branch}. Merge into ${branch} first, then push and release.`,
    );
  }
  const dirty = (await git.raw(['status', '--porcelain', '--untracked-files=no'])).trim();
  if (dirty) {
    throw new LockRefusedError('not-landed', 'You have uncommitted changes to tracked files; commit them first, then push and release.');
  }
  // The landing is announced on the page before the push is sent (what a forge's `lockstep verify` checks).
  if (container.announcesLandings && options.announce !== false) {
    const to = (await git.raw(['rev-parse', '--verify', 'HEAD^{commit}'])).trim();
    const from = await remoteTip(container, remote, branch);
    if (from !== to) await container.announceLanding({ branch, from, to });
  }
  return { branch, remote };
}

/** The push itself, by this process's git; a refusal is a 'not-landed' refusal with git's reason and next step. */
export async function pushWithGit(container: Container, { branch, remote }: { branch: string; remote: string }): Promise<void> {
  const git = container.clone.git;
  // --porcelain: one status line per ref on stdout, which says why git (or the server) refused it.
  const args = ['push', '--porcelain', '--end-of-options', remote, `refs/heads/${branch}:refs/heads/${branch}`];
  // Where the system does not show git's command line to the pre-push guard (Windows), it reads it here (cli/guard/pushArguments.ts).
  const output = await git.run(args, { env: { LOCKSTEP_PUSH_ARGUMENTS: JSON.stringify(['git', ...args]) } });
  if (output.code !== 0) {
    throw pushRefused(
      explainPushFailure({ stdout: output.stdout.toString('utf8'), stderr: output.stderr }, { remote, branch }),
      failure(output, 'push'),
    );
  }
}

/** The remote's tip of `branch` as it answers now; null when the branch does not exist there yet. */
async function remoteTip(container: Container, remote: string, branch: string): Promise<string | null> {
  const listed = await container.clone.git.raw(['ls-remote', '--end-of-options', remote, `refs/heads/${branch}`]).catch(cause => {
    throw new LockBackendError(
      'git',
      `The remote ${remote} could not be reached to announce the landing; nothing was pushed. Try again when it is reachable.`,
      { cause },
    );
  });
  const tip = listed
    .split('\n')
    .map(line => line.split('\t'))
    .find(([, ref]) => ref === `refs/heads/${branch}`)?.[0];
  return tip !== undefined && /^[0-9a-f]{40,64}$/.test(tip) ? tip : null;
}

/** A push that did not land: the lock stays the holder's, and git's reason with its next step says why. */
export function pushRefused(explained: PushFailure, cause?: unknown): LockRefusedError {
  return new LockRefusedError(
    'not-landed',
    `The push was refused, so the lock stays yours: ${explained.message}`,
    cause === undefined ? {} : { cause },
  );
}
