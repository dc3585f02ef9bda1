import type * as vscode from 'vscode';
import type { CommandContext } from './context';
import { registerHoldingCommands } from './holding';
import { registerOperatorCommands } from './operator';
import { registerQueueCommands } from './queue';
import { registerSetupCommands } from './setup';
import { registerViewCommands } from './view';
import { registerWorkCommands } from './work';

export function registerCommands(ctx: CommandContext): vscode.Disposable[] {
  return [
    ...registerHoldingCommands(ctx),
    ...registerQueueCommands(ctx),
    ...registerWorkCommands(ctx),
    ...registerOperatorCommands(ctx),
    ...registerSetupCommands(ctx),
    ...registerViewCommands(ctx),
  ];
}
