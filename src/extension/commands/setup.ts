import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CONTAINER_FILE } from '../../core/container/containerFile';
import { initContainer } from '../../core/container/init';
import { installClientHooks } from '../../core/hooks/install';
import { CommandIds } from '../commandIds';
import { readSettings } from '../settings';
import { activeModel, guarded, requireTrust, type CommandContext } from './context';

/** Setting a repository up: initialise the container, install the pre-push guard. */
export function registerSetupCommands(ctx: CommandContext): vscode.Disposable[] {
  const installHooks = guarded(ctx, 'Install hooks', async () => {
    const model = activeModel(ctx);
    if (!model || !requireTrust()) return undefined;
    const cli = vscode.Uri.joinPath(ctx.extensionUri, 'dist', 'cli.js').fsPath;
    const installed = await installClientHooks(model.root, { node: process.execPath, cli });
    void vscode.window.showInformationMessage(`Lockstep: pre-push guard installed${installed.chained ? ' (your existing hook still runs first)' : ''}.`);
    return installed.hook;
  });

  const initialise = guarded(ctx, 'Initialise', async () => {
    if (!requireTrust()) return undefined;
    const candidates = (vscode.workspace.workspaceFolders ?? []).filter(f => f.uri.scheme === 'file' && !fs.existsSync(path.join(f.uri.fsPath, CONTAINER_FILE)));
    if (candidates.length === 0) {
      void vscode.window.showInformationMessage('Lockstep: every open folder is a container already (or no folder is open).');
      return undefined;
    }
    const folder = candidates.length === 1 ? candidates[0] : await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Initialise which repository?' });
    if (!folder) return undefined;
    const identity = readSettings(folder.uri).identity;
    const { file } = await initContainer(folder.uri.fsPath, identity ? { identity } : {});
    ctx.workspace.sync();
    const choice = await vscode.window.showInformationMessage(
      `Lockstep: container initialised (driver ${file.driver}, protected ${file.protectedBranches.join(', ')}). Commit ${CONTAINER_FILE}, and install the pre-push guard in this clone.`,
      'Install Hooks');
    if (choice) await vscode.commands.executeCommand(CommandIds.installHooks);
    return file.container;
  });

  return [
    vscode.commands.registerCommand(CommandIds.installHooks, installHooks),
    vscode.commands.registerCommand(CommandIds.initialise, initialise),
  ];
}
