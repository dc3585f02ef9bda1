import * as vscode from 'vscode';
import { hasTurn, LockState } from '../core/application';
import { badgeFor, type Badge, type BadgeSource } from './badge';
import { readSettings } from './settings';
import type { WorkspaceModel } from './workspaceModel';

/**
 * The status-bar badge: renders the active container's badge object, and re-renders every second
 * while a countdown is shown (no store traffic: it only recomputes from the last record).
 */
export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private ticker: NodeJS.Timeout | undefined;
  private _badge: Badge = badgeFor({ kind: 'loading' }, Date.now());

  constructor(private readonly workspace: WorkspaceModel) {
    this.item = vscode.window.createStatusBarItem('lockstep.status', vscode.StatusBarAlignment.Left, 100);
    this.item.name = 'Lockstep';
    this.disposables.push(
      workspace.onDidChangeActive(() => this.render()),
      workspace.onDidChangeAnyModel(m => {
        if (m === workspace.active) this.render();
      }),
      vscode.workspace.onDidChangeConfiguration(e => {
        if (e.affectsConfiguration('lockstep.showBadge')) this.render();
      }),
    );
    this.render();
  }

  /** The badge as last rendered (the extension tests read it). */
  get badge(): Badge {
    return this._badge;
  }

  render(): void {
    const model = this.workspace.active;
    const source: BadgeSource = model?.source ?? { kind: 'not-initialised' };
    const badge = badgeFor(source, Date.now());
    this._badge = badge;
    this.item.text = badge.text;
    const tooltip = new vscode.MarkdownString(badge.tooltip);
    tooltip.supportThemeIcons = true;
    this.item.tooltip = tooltip;
    this.item.command = badge.command;
    this.item.backgroundColor =
      badge.severity === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : badge.severity === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    // VS Code takes only the error and warning backgrounds from extensions, so the holder's own badge
    // stands out by its icon and a foreground from the theme's palette.
    this.item.color = badge.severity === 'mine' ? new vscode.ThemeColor('charts.green') : undefined;
    this.item.accessibilityInformation = { label: `Lockstep: ${badge.text.replace(/\$\([^)]+\)\s*/g, '')}`, role: 'button' };
    const show = model === undefined ? (vscode.workspace.workspaceFolders?.length ?? 0) > 0 : readSettings(model.folder.uri).showBadge;
    if (show) this.item.show();
    else this.item.hide();
    this.scheduleTick(source);
  }

  private scheduleTick(source: BadgeSource): void {
    const counting =
      source.kind === 'offline' ||
      source.kind === 'no-page' ||
      source.kind === 'tampered' ||
      source.kind === 'misconfigured' ||
      source.kind === 'lease-lost-offline' ||
      (source.kind === 'status' &&
        ([LockState.HeldByMe, LockState.YourTurn, LockState.Free].includes(source.status.state) || hasTurn(source.status)));
    if (counting && !this.ticker) {
      this.ticker = setInterval(() => this.render(), 1000);
    } else if (!counting && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  dispose(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.item.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
