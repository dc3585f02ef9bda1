import * as vscode from 'vscode';
import { LockState } from '../core/application';
import type { WorkspaceModel } from './workspaceModel';

/** Context keys that decide where commands appear (package.json `when` clauses). */
export function registerContextKeys(workspace: WorkspaceModel): vscode.Disposable {
  const update = () => {
    const model = workspace.active;
    const status = model?.status;
    const set = (key: string, value: unknown) => void vscode.commands.executeCommand('setContext', key, value);
    set('lockstep.active', model !== undefined && model.source.kind !== 'not-initialised');
    set('lockstep.state', status?.state ?? model?.source.kind ?? 'none');
    set('lockstep.isHolder', status?.state === LockState.HeldByMe);
    set('lockstep.isQueued', (status?.position ?? 0) > 0);
    set('lockstep.canAcquire', status?.canAcquire ?? false);
    set('lockstep.isOperator', model?.isOperator ?? false);
  };
  update();
  return vscode.Disposable.from(workspace.onDidChangeActive(update), workspace.onDidChangeAnyModel(update));
}
