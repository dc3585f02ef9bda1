import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { badgeFor, badgeWords } from './badge';
import { CommandIds } from './commandIds';
import { type ContainerModel, TIMELINE_ENTRIES } from './containerModel';
import {
  auditFromHistory,
  type AuditLine,
  buildTimeline,
  describeBar,
  describeWait,
  formatDuration,
  longerAudit,
} from '../core/application';
import type { FromWebview, LockPageView, TimelineView, ToWebview } from './lockPageProtocol';
import type { WorkspaceModel } from './workspaceModel';

const VIEW_TYPE = 'lockstep.lockPage';

/**
 * The lock page: one panel showing the active container's holder, grant, countdown, queue,
 * blocks, ranges and audit trail, with the buttons that apply. Restored after a reload by its
 * serializer; scripts only from the extension's media folder, under a CSP with a fresh nonce.
 */
export class LockPagePanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** The git driver's history as audit lines, read when the page is shown or refreshed (never per heartbeat). */
  private readonly histories = new WeakMap<ContainerModel, readonly AuditLine[]>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly workspace: WorkspaceModel,
  ) {
    this.disposables.push(
      vscode.window.registerWebviewPanelSerializer(VIEW_TYPE, {
        deserializeWebviewPanel: async panel => {
          this.adopt(panel);
        },
      }),
      workspace.onDidChangeAnyModel(m => {
        if (m === workspace.active) this.post();
      }),
      workspace.onDidChangeActive(() => {
        this.post();
        void this.readHistory();
      }),
    );
  }

  show(): void {
    void this.readHistory();
    if (this.panel) {
      this.panel.reveal();
      return;
    }
    this.adopt(vscode.window.createWebviewPanel(VIEW_TYPE, 'Lockstep: Lock Page', vscode.ViewColumn.Active, this.options()));
  }

  /** The git driver keeps every transition: the timeline reaches back further with it. Other drivers keep none. */
  private async readHistory(): Promise<void> {
    const model = this.workspace.active;
    if (!model || !this.panel) return;
    try {
      const entries = await model.history(TIMELINE_ENTRIES);
      if (entries === undefined) return;
      this.histories.set(model, auditFromHistory(entries));
      this.post();
    } catch {
      // The record's own audit still draws the timeline; the page says which it used.
    }
  }

  private options(): vscode.WebviewOptions & vscode.WebviewPanelOptions {
    return {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist', 'media'), vscode.Uri.joinPath(this.extensionUri, 'media')],
    };
  }

  private adopt(panel: vscode.WebviewPanel): void {
    this.panel = panel;
    panel.webview.options = this.options();
    panel.webview.html = this.html(panel.webview);
    panel.webview.onDidReceiveMessage((message: FromWebview) => this.onMessage(message), undefined, this.disposables);
    panel.onDidDispose(
      () => {
        this.panel = undefined;
      },
      undefined,
      this.disposables,
    );
  }

  private onMessage(message: FromWebview): void {
    const commands: Record<FromWebview['type'], string | undefined> = {
      'lock/ready': undefined,
      'lock/acquire': CommandIds.acquire,
      'lock/release': CommandIds.release,
      'lock/petition': CommandIds.petition,
      'lock/withdraw': CommandIds.withdraw,
      'lock/clear': CommandIds.clear,
      'lock/refresh': CommandIds.refresh,
      'lock/select': undefined,
    };
    if (message.type === 'lock/select') {
      const model = this.workspace.all.find(m => m.folder.uri.toString() === message.key);
      if (model) this.workspace.select(model);
      return;
    }
    if (message.type === 'lock/refresh') void this.readHistory();
    const command = commands[message.type];
    // Acquire from the page means the container the page shows, not a question.
    const args = message.type === 'lock/acquire' && this.workspace.active ? [this.workspace.active.folder.uri] : [];
    if (command) void vscode.commands.executeCommand(command, ...args);
    else this.post();
  }

  private post(): void {
    if (!this.panel) return;
    const active = this.workspace.active;
    const message: ToWebview = { type: 'lock/didChange', view: viewOf(active, this.workspace.all, active && this.histories.get(active)) };
    void this.panel.webview.postMessage(message);
  }

  private html(webview: vscode.Webview): string {
    const nonce = randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'media', 'lockPage.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'lockPage.css'));
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${style}" rel="stylesheet">
<title>Lockstep: Lock Page</title>
</head>
<body>
<main id="app" aria-live="polite"><p class="muted">Reading the lock…</p></main>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  dispose(): void {
    this.panel?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

/** The view model the page renders; built from the model, never containing a token. */
export function viewOf(
  model: ContainerModel | undefined,
  all: readonly ContainerModel[] = [],
  history?: readonly AuditLine[],
): LockPageView {
  const now = Date.now();
  const source = model?.source ?? { kind: 'not-initialised' as const };
  const badge = badgeFor(source, now);
  const status = model?.status;
  return {
    folder: model?.folder.name ?? '',
    identity: model?.identity,
    state: badge.state,
    badgeText: badgeWords(badge),
    message:
      source.kind === 'offline' || source.kind === 'no-page' || source.kind === 'tampered' || source.kind === 'misconfigured'
        ? source.message
        : undefined,
    grant: status?.grant ?? 0,
    holder: status?.holder ?? null,
    queue: status?.queue ?? [],
    position: status?.position ?? 0,
    canAcquire: status?.canAcquire ?? false,
    isOperator: model?.isOperator ?? false,
    turn: status?.turn ?? null,
    ranges: status?.ranges ?? [],
    blocks: status?.blocks ?? [],
    caution: status?.caution ?? null,
    audit: (model?.record?.audit ?? []).slice(-100),
    timeline: timelineOf(model, history, now),
    containers: all.map(m => {
      const b = badgeFor(m.source, now);
      return { key: m.folder.uri.toString(), folder: m.folder.name, shown: m === model, state: b.state, badgeText: badgeWords(b) };
    }),
    now,
  };
}

function timelineOf(model: ContainerModel | undefined, history: readonly AuditLine[] | undefined, now: number): TimelineView | undefined {
  const record = model?.record;
  const leaseTtlMs = model?.leaseTtlMs;
  if (!record || leaseTtlMs === undefined) return undefined;
  const audit = longerAudit(record.audit, history);
  const t = buildTimeline({ audit, holder: record.holder, leaseTtlMs, now });
  const clock = (ms: number) => new Date(ms).toLocaleString(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' });
  return {
    from: t.from,
    to: t.to,
    source: audit === record.audit ? 'audit' : 'history',
    bars: t.bars.map(b => ({ ...b, text: describeBar(b, clock) })),
    waits: t.waits.map(w => ({ ...w, text: describeWait(w, clock, formatDuration) })),
  };
}
