import * as vscode from 'vscode';
import type { Container } from '../core/container/container';
import { LockRefusedError } from '../core/errors';

/**
 * Pushes the protected branch to the shared remote, with a progress notification. The pre-push
 * guard (when installed) checks the grant on the way; its refusal comes back as the error text.
 */
export async function pushProtectedBranch(container: Container): Promise<void> {
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
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Lockstep: pushing ${branch} to ${remote}…` },
    async () => {
      try {
        await git.raw(['push', remote, `refs/heads/${branch}:refs/heads/${branch}`]);
      } catch (error) {
        const text = error instanceof Error ? error.message : String(error);
        const reason = text.split('\n').find(l => l.includes('lockstep:')) ?? text.split('\n')[0];
        throw new LockRefusedError('not-landed', `The push was refused: ${reason.replace(/^remote:\s*/, '')}`, { cause: error });
      }
    });
}
