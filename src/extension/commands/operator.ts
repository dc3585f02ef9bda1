import * as vscode from 'vscode';
import { afterClear, escapeControls, LockState } from '../../core/application';
import { CommandIds } from '../commandIds';
import { activeModel, guarded, requireTrust, type CommandContext } from './context';

/** The operator's one intervention: clear a HOLDER SILENT lock, with a reason for the audit trail. */
export function registerOperatorCommands(ctx: CommandContext): vscode.Disposable[] {
  const clear = guarded(ctx, 'Clear', async (reason?: string) => {
    const model = activeModel(ctx);
    if (!model || !requireTrust(ctx)) return undefined;
    const status = model.status;
    if (status && status.state !== LockState.HolderSilent && typeof reason !== 'string') {
      // Said before asking for a reason; the store refuses (and audits) it anyway.
      void vscode.window.showWarningMessage(
        `Lockstep: only a HOLDER SILENT lock may be cleared; the lock is ${status.state.replace(/-/g, ' ')}.`,
      );
      return undefined;
    }
    const why =
      typeof reason === 'string'
        ? reason
        : await vscode.window.showInputBox({
            prompt: `Why clear ${status?.holder?.identity ?? 'the holder'}'s grant #${status?.holder?.grant ?? '?'}? (goes into the audit trail)`,
            validateInput: v => (v.trim() ? undefined : 'A reason is required'),
          });
    if (!why) return undefined;
    const { clearedGrant, queueHead } = await model.act(c => c.clear(why));
    void vscode.window.showInformationMessage(`Lockstep: ${escapeControls(afterClear(clearedGrant, queueHead))}`);
    return clearedGrant;
  });
  return [vscode.commands.registerCommand(CommandIds.clear, clear)];
}
