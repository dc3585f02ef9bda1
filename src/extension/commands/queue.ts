import * as vscode from 'vscode';
import { CommandIds } from '../commandIds';
import { activeModel, guarded, requireTrust, type CommandContext } from './context';

/** A coworker's side of the queue: petition and withdraw. */
export function registerQueueCommands(ctx: CommandContext): vscode.Disposable[] {
  const petition = guarded(ctx, 'Petition', async (note?: string) => {
    const model = activeModel(ctx);
    if (!model || !requireTrust(ctx)) return undefined;
    const text =
      typeof note === 'string'
        ? note
        : await vscode.window.showInputBox({ prompt: 'A note for the lead (optional)', placeHolder: 'what you need the lock for' });
    if (text === undefined) return undefined;
    const { position } = await model.act(c => c.petition(text.trim() === '' ? undefined : text));
    void vscode.window.showInformationMessage(
      `Lockstep: you are in the queue at position ${position}. You will be told when it is your turn.`,
    );
    return position;
  });

  const withdraw = guarded(ctx, 'Withdraw', async () => {
    const model = activeModel(ctx);
    if (!model || !requireTrust(ctx)) return undefined;
    await model.act(c => c.withdraw());
    void vscode.window.showInformationMessage('Lockstep: you left the queue.');
    return true;
  });

  return [vscode.commands.registerCommand(CommandIds.petition, petition), vscode.commands.registerCommand(CommandIds.withdraw, withdraw)];
}
