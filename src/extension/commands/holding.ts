import * as vscode from 'vscode';
import { formatDuration, LockRefusedError } from '../../core/application';
import { CommandIds } from '../commandIds';
import { pushProtectedBranch } from '../push';
import { activeModel, chooseModel, guarded, requireTrust, type CommandContext } from './context';

/** The holder's commands: acquire, release (only after a push), push and release, and the badge menu. */
export function registerHoldingCommands(ctx: CommandContext): vscode.Disposable[] {
  const acquire = guarded(ctx, 'Acquire', async (target?: unknown) => {
    const model = await chooseModel(ctx, 'Acquire the lock of which container?', target);
    if (!model || !requireTrust(ctx)) return undefined;
    const { grant, expiresAt } = await model.act(c => c.acquire());
    void vscode.window.showInformationMessage(
      `Lockstep: you hold the lock — grant #${grant}, ${formatDuration(expiresAt - Date.now())} until expiry. Heartbeats keep it while this window is open.`,
    );
    return grant;
  });

  const pushAndRelease = guarded(ctx, 'Push and release', async () => {
    const model = activeModel(ctx);
    if (!model || !requireTrust(ctx)) return undefined;
    return model.act(async c => {
      await pushProtectedBranch(c, ctx.log);
      // The push just landed and git moved the remote-tracking ref: judged by it, the remote is not asked again.
      const { grant } = await c.release({ justPushed: true });
      void vscode.window.showInformationMessage(`Lockstep: pushed and released grant #${grant}.`);
      return grant;
    });
  });

  const release = guarded(ctx, 'Release', async () => {
    const model = activeModel(ctx);
    if (!model || !requireTrust(ctx)) return undefined;
    try {
      const { grant } = await model.act(c => c.release());
      void vscode.window.showInformationMessage(`Lockstep: released grant #${grant}.`);
      return grant;
    } catch (error) {
      if (!(error instanceof LockRefusedError && error.reason === 'not-landed')) throw error;
      ctx.log.warn(`Release refused: ${error.message}`);
      // Release is valid only after a push: say what is missing and offer to push.
      const choice = await vscode.window.showWarningMessage(`Lockstep: ${error.message}`, 'Push and Release');
      return choice ? vscode.commands.executeCommand(CommandIds.pushAndRelease) : undefined;
    }
  });

  const holderMenu = guarded(ctx, 'Lock actions', async () => {
    const items: (vscode.QuickPickItem & { command: string })[] = [
      { label: '$(cloud-upload) Push and release', command: CommandIds.pushAndRelease },
      { label: '$(unlock) Release', description: 'after your work is pushed', command: CommandIds.release },
      { label: '$(list-ordered) Lease identifiers to a coworker', command: CommandIds.leaseIds },
      { label: '$(symbol-number) Insert next identifier', command: CommandIds.insertNextId },
      { label: '$(person-add) Assign a block of work', command: CommandIds.assignBlock },
      { label: '$(book) Show lock page', command: CommandIds.showLockPage },
    ];
    const picked = await vscode.window.showQuickPick(items, { placeHolder: 'Lockstep: you hold the lock' });
    return picked ? vscode.commands.executeCommand(picked.command) : undefined;
  });

  return [
    vscode.commands.registerCommand(CommandIds.acquire, acquire),
    vscode.commands.registerCommand(CommandIds.release, release),
    vscode.commands.registerCommand(CommandIds.pushAndRelease, pushAndRelease),
    vscode.commands.registerCommand(CommandIds.holderMenu, holderMenu),
  ];
}
