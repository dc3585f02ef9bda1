import type { Container } from './container';
import { LockRefusedError } from '../errors';
import { failure } from '../git/gitError';

/**
 * Pushes the protected branch to the shared remote (VS Code's Push and Release, `lockstep release
 * --push`). The pre-push guard (when installed) and the server's guard check the grant on the way;
 * a refusal comes back as a 'not-landed' refusal that quotes the guard's reason.
 */
export async function pushProtectedBranch(container: Container): Promise<{ branch: string; remote: string }> {
  const branch = container.file.protectedBranches[0] ?? 'main';
  const remote = container.file.remote;
  const git = container.clone.git;
  const current = (await git.raw(['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(() => '')).trim();
  if (current !== branch) {
    throw new LockRefusedError('not-landed', `You are on ${current || 'a detached HEAD'}; the lock's work lands on ${branch}. Merge into ${branch} first, then push and release.`);
  }
  const dirty = (await git.raw(['status', '--porcelain', '--untracked-files=no'])).trim();
  if (dirty) {
    throw new LockRefusedError('not-landed', 'You have uncommitted changes to tracked files; commit them first, then push and release.');
  }
  const output = await git.run(['push', '--quiet', '--end-of-options', remote, `refs/heads/${branch}:refs/heads/${branch}`]);
  if (output.code !== 0) {
    // A guard's refusal is Lockstep's own line and is quoted; git's other output (URLs, ref names) never is.
    const guard = output.stderr.split('\n').find(l => /^(?:remote:\s*)?lockstep:/.test(l));
    const error = failure(output, 'push');
    const reason = guard !== undefined ? guard.replace(/^remote:\s*/, '').replace(/^lockstep:\s*/, '')
      : /\[rejected\].*\((?:fetch first|non-fast-forward)\)/.test(output.stderr)
        ? `${remote}/${branch} has commits this clone does not have; pull them (git pull --rebase), then push and release.`
        : error.message;
    throw new LockRefusedError('not-landed', `The push was refused, so the lock stays yours: ${reason}`, { cause: error });
  }
  return { branch, remote };
}
