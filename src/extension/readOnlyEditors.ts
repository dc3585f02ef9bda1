import * as vscode from 'vscode';
import { lockedByOthers, readOnlyReason } from '../core/application';
import { CommandIds } from './commandIds';
import type { ContainerModel } from './containerModel';
import type { Log } from './log';
import { readSettings } from './settings';
import type { WorkspaceModel } from './workspaceModel';

/** VS Code's own session-only read-only switch (1.79+): it changes no setting and no file. */
const SET_READONLY = 'workbench.action.files.setActiveEditorReadonlyInSession';
const RESET_READONLY = 'workbench.action.files.resetActiveEditorReadonlyInSession';

/**
 * `lockstep.whileLockedByOthers: readOnly`. While someone else holds the lock (or it is someone else's
 * window), every editor of a file in the container is read-only for this window's session; the moment this
 * person may take the lock, those editors are writable again by themselves. Untitled files, files outside
 * every container and `lockstep.readOnlyExclude` stay writable. VS Code offers the session switch for the
 * active editor only, so visible editors are switched one by one (focus returns where it was) and the rest
 * as they become active.
 */
export class ReadOnlyEditors implements vscode.Disposable {
  /** Resources this extension made read-only (and so may make writable again). */
  private readonly marked = new Set<string>();
  /** The last explanation shown per container: one notification per holder and grant, not per editor. */
  private readonly explained = new Map<ContainerModel, string>();
  private readonly disposables: vscode.Disposable[];
  private queue: Promise<void> = Promise.resolve();
  /** Documents made writable by hand while locked (VS Code's "set writeable"), told once per document and holder. */
  private readonly overridden = new Map<string, string>();

  constructor(
    private readonly workspace: WorkspaceModel,
    private readonly log: Log,
  ) {
    this.disposables = [
      workspace.onDidChangeAnyModel(() => this.schedule(() => this.reconcileVisible())),
      vscode.window.onDidChangeActiveTextEditor(() => this.schedule(() => this.reconcileActive())),
      vscode.workspace.onDidChangeTextDocument(e => {
        if (e.contentChanges.length > 0) this.noticeOverride(e.document);
      }),
      vscode.workspace.onDidChangeConfiguration(e => {
        if (e.affectsConfiguration('lockstep.whileLockedByOthers') || e.affectsConfiguration('lockstep.readOnlyExclude'))
          this.schedule(() => this.reconcileVisible());
      }),
    ];
  }

  /** Whether this document's editors should be read-only now. */
  private wanted(document: vscode.TextDocument): ContainerModel | undefined {
    if (document.uri.scheme !== 'file' || document.isUntitled || document.uri.path.includes('/.git/')) return undefined;
    const model = this.workspace.forUri(document.uri);
    if (!model) return undefined;
    const settings = readSettings(model.folder.uri);
    if (settings.whileLockedByOthers !== 'readOnly' || !lockedByOthers(model.status)) return undefined;
    const excluded = settings.readOnlyExclude.some(
      glob => vscode.languages.match({ pattern: new vscode.RelativePattern(model.folder, glob) }, document) > 0,
    );
    return excluded ? undefined : model;
  }

  /** One reconciliation at a time: each may move focus and must put it back before the next. */
  private schedule(step: () => Promise<void>): void {
    this.queue = this.queue.then(step).catch(error => this.log.error('read-only editors', error));
  }

  private mismatched(editor: vscode.TextEditor): boolean {
    return (this.wanted(editor.document) !== undefined) !== this.marked.has(editor.document.uri.toString());
  }

  private async reconcileActive(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (editor && this.mismatched(editor)) await this.apply(editor);
  }

  private async reconcileVisible(): Promise<void> {
    const active = vscode.window.activeTextEditor;
    const others = vscode.window.visibleTextEditors.filter(e => e !== active && this.mismatched(e));
    for (const editor of others) {
      await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, preserveFocus: false });
      await this.reconcileActive();
    }
    if (active && others.length > 0)
      await vscode.window.showTextDocument(active.document, { viewColumn: active.viewColumn, preserveFocus: false });
    await this.reconcileActive();
  }

  /** Switches the active editor (which is `editor`) to what the lock wants. */
  private async apply(editor: vscode.TextEditor): Promise<void> {
    if (vscode.window.activeTextEditor?.document !== editor.document) return;
    const key = editor.document.uri.toString();
    const model = this.wanted(editor.document);
    const name = vscode.workspace.asRelativePath(editor.document.uri);
    if (model) {
      await vscode.commands.executeCommand(SET_READONLY);
      this.marked.add(key);
      this.log.info(
        `${model.folder.name}: ${name} is read-only while ${model.status?.holder?.identity ?? model.status?.turn?.identity ?? 'someone else'} has the lock`,
      );
      this.explain(model);
    } else {
      await vscode.commands.executeCommand(RESET_READONLY);
      this.marked.delete(key);
      this.log.info(`${name} is writable again`);
    }
  }

  /**
   * The switch is advisory: VS Code's banner offers "set writeable", and an edit then goes in. Say who
   * holds the lock and that the fence is at landing (the push), with Petition — once per file and holder.
   */
  private noticeOverride(document: vscode.TextDocument): void {
    const key = document.uri.toString();
    if (!this.marked.has(key)) return;
    const model = this.wanted(document);
    const status = model?.status;
    if (!model || !status) return;
    const holder = `${status.holder?.identity ?? status.turn?.identity ?? ''}#${status.holder?.grant ?? ''}`;
    if (this.overridden.get(key) === holder) return;
    this.overridden.set(key, holder);
    const name = vscode.workspace.asRelativePath(document.uri);
    const who = status.holder?.identity ?? status.turn?.identity ?? 'someone else';
    this.log.warn(`${model.folder.name}: ${name} was made writable and edited while ${who} has the lock`);
    const actions = status.position === 0 ? ['Petition', 'Show Lock Page'] : ['Show Lock Page'];
    void vscode.window
      .showWarningMessage(
        `Lockstep: you made ${name} writable while ${who} holds the lock. Your edits stay in this clone: a push to a protected branch is refused until you hold the lock. Petition to take your turn.`,
        ...actions,
      )
      .then(choice => {
        if (choice === 'Petition') void vscode.commands.executeCommand(CommandIds.petition, '');
        if (choice === 'Show Lock Page') void vscode.commands.executeCommand(CommandIds.showLockPage);
      });
  }

  /** The one-line explanation with a Petition action, once per container and holder. */
  private explain(model: ContainerModel): void {
    const status = model.status;
    if (!status) return;
    const key = `${status.holder?.identity ?? ''}#${status.holder?.grant ?? ''}|${status.turn?.identity ?? ''}`;
    if (this.explained.get(model) === key) return;
    this.explained.set(model, key);
    const actions = status.position === 0 ? ['Petition', 'Show Lock Page'] : ['Show Lock Page'];
    void vscode.window.showInformationMessage(`Lockstep: ${readOnlyReason(status, Date.now())}`, ...actions).then(choice => {
      if (choice === 'Petition') void vscode.commands.executeCommand(CommandIds.petition, '');
      if (choice === 'Show Lock Page') void vscode.commands.executeCommand(CommandIds.showLockPage);
    });
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
