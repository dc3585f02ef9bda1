import * as vscode from 'vscode';
import { type Container, explainPushFailure, hasClientHook, prepareLanding, pushRefused, pushWithGit } from '../core/application';
import { gitExtensionRepository, gitExtensionStderr } from './gitExtension';
import type { Log } from './log';

/**
 * Pushes the protected branch to the shared remote with a progress notification: checked and announced
 * as core does it (src/core/container/push.ts), then sent through VS Code's git extension where it is
 * present — the user's credentials, askpass and Git output, as the Source Control view's Push — else by
 * git itself. A refusal is core's 'not-landed' refusal with git's reason and the next step.
 *
 * Through the git extension, only the push itself talks to the remote: where this clone's pre-push hook
 * is Lockstep's, the hook announces the landing during the push (with the remote's tip git learned
 * there), so a remote that needs credentials is asked once, through VS Code's askpass, by the push.
 */
export async function pushProtectedBranch(container: Container, log: Log): Promise<void> {
  const branch = container.file.protectedBranches[0] ?? 'main';
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Lockstep: pushing ${branch} to ${container.file.remote}…` },
    async () => {
      // On Windows the pre-push guard cannot read the command line of a push it did not start (cli/guard/pushArguments.ts)
      // and refuses one that carries the proof, so the landing goes through Lockstep's own push, which tells it.
      const repository =
        process.platform === 'win32' ? undefined : await gitExtensionRepository(container.clone.root).catch(() => undefined);
      if (repository === undefined) {
        const where = await prepareLanding(container);
        log.info(
          `Pushing ${where.branch} with git (${process.platform === 'win32' ? 'on Windows Lockstep pushes itself' : "VS Code's git extension is not available for this folder"}).`,
        );
        await pushWithGit(container, where);
        return;
      }
      const where = await prepareLanding(container, { announce: !(await hasClientHook(container.clone.root)) });
      try {
        await repository.push(where.remote, where.branch);
      } catch (error) {
        throw pushRefused(explainPushFailure({ stdout: '', stderr: gitExtensionStderr(error) }, where));
      }
      log.info(`Pushed ${where.branch} to ${where.remote} through VS Code's git.`);
    },
  );
}
