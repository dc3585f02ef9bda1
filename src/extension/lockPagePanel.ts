import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { badgeFor } from './badge';
import { CommandIds } from './commandIds';
import type { ContainerModel } from './containerModel';
import type { FromWebview, LockPageView, ToWebview } from './lockPageProtocol';
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

  constructor(private readonly extensionUri: vscode.Uri, private readonly workspace: WorkspaceModel) {
    this.disposables.push(
      vscode.window.registerWebviewPanelSerializer(VIEW_TYPE, {
        deserializeWebviewPanel: async panel => { this.adopt(panel); },
      }),
      workspace.onDidChangeAnyModel(m => { if (m === workspace.active) this.post(); }),
      workspace.onDidChangeActive(() => this.post()),
    );
  }

  show(): void {
    if (this.panel) {
      this.panel.reveal();
      return;
    }
    this.adopt(vscode.window.createWebviewPanel(VIEW_TYPE, 'Lockstep: Lock Page', vscode.ViewColumn.Active, this.options()));
  }

  private options(): vscode.WebviewOptions & vscode.WebviewPanelOptions {
    return { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist', 'media'), vscode.Uri.joinPath(this.extensionUri, 'media')] };
  }

  private adopt(panel: vscode.WebviewPanel): void {
    this.panel = panel;
    panel.webview.options = this.options();
    panel.webview.html = this.html(panel.webview);
    panel.webview.onDidReceiveMessage((message: FromWebview) => this.onMessage(message), undefined, this.disposables);
    panel.onDidDispose(() => { this.panel = undefined; }, undefined, this.disposables);
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
    };
    const command = commands[message.type];
    if (command) void vscode.commands.executeCommand(command);
    else this.post();
  }

  private post(): void {
    if (!this.panel) return;
    const message: ToWebview = { type: 'lock/didChange', view: viewOf(this.workspace.active) };
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
export function viewOf(model: ContainerModel | undefined): LockPageView {
  const now = Date.now();
  const source = model?.source ?? { kind: 'not-initialised' as const };
  const badge = badgeFor(source, now);
  const status = model?.status;
  return {
    folder: model?.folder.name ?? '',
    identity: model?.identity,
    state: badge.state,
    badgeText: badge.text.replace(/\$\([^)]+\)\s*/g, ''),
    message: source.kind === 'offline' || source.kind === 'no-page' ? source.message : undefined,
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
    now,
  };
}
