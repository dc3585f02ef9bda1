import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CONTAINER_FILE } from '../core/application';
import { ContainerModel } from './containerModel';
import type { Log } from './log';
import { readSettings } from './settings';

/**
 * All containers of the window (multi-root: one per workspace folder that has `.lockstep.json`)
 * and which one is active: the active editor's, else the first. The badge shows the active one.
 */
export class WorkspaceModel implements vscode.Disposable {
  private readonly models = new Map<string, ContainerModel>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly _onDidChangeActive = new vscode.EventEmitter<ContainerModel | undefined>();
  readonly onDidChangeActive = this._onDidChangeActive.event;
  private readonly _onDidChangeAnyModel = new vscode.EventEmitter<ContainerModel>();
  /** Fires whenever any container's state changed. */
  readonly onDidChangeAnyModel = this._onDidChangeAnyModel.event;
  private readonly _onDidCreateModel = new vscode.EventEmitter<ContainerModel>();
  readonly onDidCreateModel = this._onDidCreateModel.event;
  private _active: ContainerModel | undefined;

  constructor(private readonly log: Log) {
    this.disposables.push(
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.sync()),
      vscode.window.onDidChangeActiveTextEditor(() => this.pickActive()),
      vscode.workspace.onDidChangeConfiguration(e => {
        if (!e.affectsConfiguration('lockstep')) return;
        for (const model of this.models.values()) model.updateSettings(readSettings(model.folder.uri));
      }),
    );
    // A `.lockstep.json` created or deleted later (init, a pull) adds or drops a container; one changed in place (a
    // pull that moves the page, another container) is opened again. A delete and a create close together may
    // arrive as one change, so a change also syncs.
    const watcher = vscode.workspace.createFileSystemWatcher(`**/${CONTAINER_FILE}`);
    this.disposables.push(
      watcher,
      watcher.onDidCreate(() => this.sync()),
      watcher.onDidDelete(() => this.sync()),
      watcher.onDidChange(uri => this.reopenFor(uri)),
    );
  }

  get active(): ContainerModel | undefined {
    return this._active;
  }
  get all(): readonly ContainerModel[] {
    return [...this.models.values()];
  }

  forUri(uri: vscode.Uri): ContainerModel | undefined {
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    return folder ? this.models.get(folder.uri.toString()) : undefined;
  }

  /** Opens the container of the folder whose `.lockstep.json` is `uri` again (its settings may say another page). */
  private reopenFor(uri: vscode.Uri): void {
    this.sync();
    const model = this.forUri(uri);
    if (model && path.join(model.folder.uri.fsPath, CONTAINER_FILE) === uri.fsPath) void model.reopen();
  }

  /** Creates models for folders that have `.lockstep.json`, disposes those whose folder went. */
  sync(): void {
    const folders = vscode.workspace.workspaceFolders ?? [];
    const wanted = new Set<string>();
    for (const folder of folders) {
      if (folder.uri.scheme !== 'file' || !fs.existsSync(path.join(folder.uri.fsPath, CONTAINER_FILE))) continue;
      const key = folder.uri.toString();
      wanted.add(key);
      if (this.models.has(key)) continue;
      const model = new ContainerModel(folder, this.log, readSettings(folder.uri));
      model.onDidChange(m => this._onDidChangeAnyModel.fire(m));
      this.models.set(key, model);
      this._onDidCreateModel.fire(model);
      void model.refresh();
    }
    for (const [key, model] of this.models) {
      if (!wanted.has(key)) {
        model.dispose();
        this.models.delete(key);
      }
    }
    this.pickActive();
  }

  /** Makes `model` the active container (the lock page's choice) until the active editor says otherwise. */
  select(model: ContainerModel): void {
    if (!this.all.includes(model) || model === this._active) return;
    this._active = model;
    this._onDidChangeActive.fire(model);
  }

  private pickActive(): void {
    const editor = vscode.window.activeTextEditor;
    const next = (editor && this.forUri(editor.document.uri)) ?? this._active ?? this.all[0];
    const still = next && [...this.models.values()].includes(next) ? next : this.all[0];
    if (still !== this._active) {
      this._active = still;
      this._onDidChangeActive.fire(still);
    }
  }

  dispose(): void {
    for (const model of this.models.values()) model.dispose();
    this.models.clear();
    for (const d of this.disposables) d.dispose();
    this._onDidChangeActive.dispose();
    this._onDidChangeAnyModel.dispose();
    this._onDidCreateModel.dispose();
  }
}
