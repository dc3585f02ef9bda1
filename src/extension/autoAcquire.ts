import * as vscode from 'vscode';
import { LockState } from '../core/application';
import { CommandIds } from './commandIds';
import type { ContainerModel } from './containerModel';
import type { Log } from './log';
import { readSettings } from './settings';
import type { WorkspaceModel } from './workspaceModel';

/**
 * `lockstep.acquireOnEdit`: the lead's first edit acquires the lock when it is free or it is
 * their turn. When someone else holds it, one non-modal warning per container per session names
 * the holder and offers to petition — never one per keystroke.
 */
export class AutoAcquire implements vscode.Disposable {
  private readonly subscription: vscode.Disposable;
  private readonly acquiring = new Set<ContainerModel>();
  private readonly warned = new Set<ContainerModel>();

  constructor(
    private readonly workspace: WorkspaceModel,
    private readonly log: Log,
  ) {
    this.subscription = vscode.workspace.onDidChangeTextDocument(e => this.onEdit(e));
  }

  private onEdit(event: vscode.TextDocumentChangeEvent): void {
    if (event.contentChanges.length === 0 || event.document.uri.scheme !== 'file' || !vscode.workspace.isTrusted) return;
    if (event.document.uri.path.includes('/.git/')) return;
    const model = this.workspace.forUri(event.document.uri);
    const status = model?.status;
    if (!model || !status || !readSettings(model.folder.uri).acquireOnEdit || this.acquiring.has(model)) return;

    if (
      status.canAcquire &&
      (status.state === LockState.Free || status.state === LockState.YourTurn || status.state === LockState.HolderSilent)
    ) {
      this.acquiring.add(model);
      void model
        .act(c => c.acquire())
        .then(({ grant }) => {
          this.log.info(`${model.folder.name}: acquired grant #${grant} on first edit`);
          void vscode.window.setStatusBarMessage(`$(lock) Lockstep: you hold the lock (grant #${grant})`, 5000);
        })
        .catch(error => this.log.error(`${model.folder.name}: acquire on edit`, error))
        .finally(() => this.acquiring.delete(model));
      return;
    }
    if ((status.state === LockState.HeldByOther || status.state === LockState.HolderSilent) && !this.warned.has(model)) {
      this.warned.add(model);
      const holder = status.holder
        ? `${status.holder.identity} holds the lock (grant #${status.holder.grant})`
        : 'Someone else holds the lock';
      this.log.info(`${model.folder.name}: edited while ${holder}; warned (once this session)`);
      void vscode.window
        .showWarningMessage(`Lockstep: ${holder}; your edits cannot land until you hold it.`, 'Petition', 'Show Lock Page')
        .then(choice => {
          if (choice === 'Petition') void vscode.commands.executeCommand(CommandIds.petition, '');
          if (choice === 'Show Lock Page') void vscode.commands.executeCommand(CommandIds.showLockPage);
        });
    }
  }

  dispose(): void {
    this.subscription.dispose();
  }
}
