import * as vscode from 'vscode';
import { CommandIds } from '../commandIds';
import { activeModel, type CommandContext } from './context';

/** Looking, not changing: the lock page, the log, a refresh. */
export function registerViewCommands(ctx: CommandContext): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(CommandIds.showLockPage, () => ctx.showLockPage()),
    vscode.commands.registerCommand(CommandIds.showLog, () => ctx.log.show()),
    vscode.commands.registerCommand(CommandIds.refresh, async () => {
      await activeModel(ctx)?.refresh({ asked: true });
    }),
  ];
}
