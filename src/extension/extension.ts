import * as vscode from 'vscode';
import { repairClientHook } from '../core/application';
import { AutoAcquire } from './autoAcquire';
import { createExtensionApi, type LockstepExtension } from './api';
import { turnNotice } from './badge';
import { CommandIds } from './commandIds';
import { followVsCodeGit } from './gitExtension';
import { registerCommands } from './commands/index';
import { registerContextKeys } from './contextKeys';
import type { ContainerModel } from './containerModel';
import { HoldWarningNotices } from './holdWarningNotices';
import { LockPagePanel } from './lockPagePanel';
import { Log } from './log';
import { PetitionNotices } from './petitionNotices';
import { ReadOnlyEditors } from './readOnlyEditors';
import { readSettings } from './settings';
import { SetupProgress } from './setupProgress';
import { StatusBar } from './statusBar';
import { putCliOnTerminalPath } from './terminalCli';
import { WorkspaceModel } from './workspaceModel';

/**
 * Wiring only. Activation opens no store connection: models read the lock on their first
 * refresh, scheduled after activation returns.
 */
export function activate(context: vscode.ExtensionContext): LockstepExtension {
  const started = performance.now();
  const log = new Log();
  log.setLevel(readSettings().logLevel);
  const git = followVsCodeGit(program =>
    log.info(`git: ${program.source === 'path' ? 'git on PATH' : program.program} (${program.source})`),
  );
  const workspace = new WorkspaceModel(log);
  const statusBar = new StatusBar(workspace);
  const lockPage = new LockPagePanel(context.extensionUri, workspace);

  context.subscriptions.push(
    log,
    git,
    workspace,
    statusBar,
    lockPage,
    new AutoAcquire(workspace, log),
    new ReadOnlyEditors(workspace, log),
    new HoldWarningNotices(workspace, log),
    new PetitionNotices(workspace, log),
    new SetupProgress(workspace, log),
    registerContextKeys(workspace),
    ...registerCommands({
      workspace,
      log,
      extensionUri: context.extensionUri,
      storageUri: context.globalStorageUri,
      showLockPage: () => lockPage.show(),
    }),
    workspace.onDidCreateModel(model => watchForNotifications(model, context)),
    repairHooksAfterUpdate(workspace, context, log),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      for (const m of workspace.all) void m.refresh();
    }),
    vscode.workspace.onDidChangeConfiguration(e => {
      if (e.affectsConfiguration('lockstep.logLevel')) log.setLevel(readSettings().logLevel);
    }),
  );
  putCliOnTerminalPath(context, log);
  setTimeout(() => workspace.sync(), 0);

  const activationMs = performance.now() - started;
  log.info(
    `Lockstep activated in ${activationMs.toFixed(1)} ms (VS Code ${vscode.version})${vscode.workspace.isTrusted ? '' : ' — restricted mode: read-only'}`,
  );
  // Versioned and read-only (src/extension/api.ts): state and events, no operation.
  return createExtensionApi(
    workspace,
    () => statusBar.badge,
    activationMs,
    () => log.lines(),
  );
}

/**
 * A hook installed by an earlier version of this extension runs a CLI that the update removed:
 * rewrite it to run this version's, once per container per session, in trusted workspaces only.
 */
function repairHooksAfterUpdate(workspace: WorkspaceModel, context: vscode.ExtensionContext, log: Log): vscode.Disposable {
  const checked = new WeakSet<ContainerModel>();
  const cli = vscode.Uri.joinPath(context.extensionUri, 'dist', 'cli.js').fsPath;
  return workspace.onDidChangeAnyModel(model => {
    if (checked.has(model) || model.status === undefined || !vscode.workspace.isTrusted) return;
    checked.add(model);
    void repairClientHook(model.root, { node: process.execPath, cli })
      .then(repaired => {
        if (repaired) log.info(`${model.folder.name}: the pre-push guard pointed at a removed Lockstep; it now runs this version.`);
      })
      .catch(error => log.error(`${model.folder.name}: could not check the pre-push guard`, error));
  });
}

/** "Your turn" with an Acquire button; a lost lease as an error that says what happened. */
function watchForNotifications(model: ContainerModel, context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    model.onDidBecomeTurn(status => {
      void vscode.window.showInformationMessage(turnNotice(status, Date.now()), 'Acquire').then(choice => {
        if (choice) void vscode.commands.executeCommand(CommandIds.acquire);
      });
    }),
    model.onDidLoseLease(error => {
      void vscode.window
        .showErrorMessage(`Lockstep: ${error.message} Your pushes to protected branches are blocked.`, 'Show Lock Page')
        .then(choice => {
          if (choice) void vscode.commands.executeCommand(CommandIds.showLockPage);
        });
    }),
  );
}

export function deactivate(): void {
  // Everything lives in context.subscriptions. A lease is never released here: only after a push,
  // or it expires by its TTL.
}
