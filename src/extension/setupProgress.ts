import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as vscode from 'vscode';
import { CONTAINER_FILE, gitIn, hasClientHook, LockState, readServerSettings } from '../core/application';
import type { ContainerModel } from './containerModel';
import type { Log } from './log';
import type { WorkspaceModel } from './workspaceModel';

/** The context keys the first-day walkthrough's steps complete on (package.json `walkthroughs`). */
export const SetupKeys = {
  initialised: 'lockstep.setup.initialised',
  held: 'lockstep.setup.held',
  committed: 'lockstep.setup.committed',
  hooks: 'lockstep.setup.hooks',
  serverGuard: 'lockstep.setup.serverGuard',
} as const;

export interface SetupFacts {
  /** `.lockstep.json` is in the clone's HEAD commit. */
  readonly committed: boolean;
  /** This clone's pre-push hook is Lockstep's. */
  readonly hooks: boolean;
  /** The shared remote is a local bare repository with the server guard's pinned settings. */
  readonly serverGuard: boolean;
}

/** What of the first day's setup the active container has done; read from git and the hooks folders. */
export async function readSetupFacts(root: string, remote: string): Promise<SetupFacts> {
  const git = gitIn(root);
  const committed = await git.raw(['cat-file', '-e', `HEAD:${CONTAINER_FILE}`]).then(
    () => true,
    () => false,
  );
  const hooks = await hasClientHook(root);
  const url = (await git.raw(['remote', 'get-url', '--end-of-options', remote]).catch(() => '')).trim();
  // Only a remote on this machine can be looked into; a server's guard is checked there (`lockstep hooks status --server`).
  const local = url.startsWith('file://') ? fileURLToPath(url) : path.isAbsolute(url) ? url : undefined;
  const serverGuard = local !== undefined && fs.existsSync(local) && (await readServerSettings(local).catch(() => undefined)) !== undefined;
  return { committed, hooks, serverGuard };
}

/** How often the facts are re-read until every step is done (a commit or a server install leaves no event here). */
const CHECK_EVERY_MS = 5_000;

/**
 * Keeps the walkthrough's context keys true to the active container: re-read when the active container
 * changes and every few seconds until every step is done, then not at all.
 *
 * VS Code ticks a step when its key turns true while the walkthrough service runs (it starts with the first
 * walkthrough opened in the window); a key already true before that is not ticked by itself (the person
 * marks that step done).
 */
export class SetupProgress implements vscode.Disposable {
  private readonly done = new WeakSet<ContainerModel>();
  private readonly disposables: vscode.Disposable[];
  private readonly timer: NodeJS.Timeout;
  private readonly values = new Map<string, boolean>();
  private checking = false;

  constructor(
    private readonly workspace: WorkspaceModel,
    private readonly log: Log,
  ) {
    this.disposables = [
      workspace.onDidChangeActive(() => void this.check()),
      workspace.onDidChangeAnyModel(model => {
        if (model === workspace.active) void this.check();
      }),
    ];
    this.timer = setInterval(() => void this.check(), CHECK_EVERY_MS);
  }

  private async check(): Promise<void> {
    const model = this.workspace.active;
    if (this.checking || (model && this.done.has(model))) return;
    this.checking = true;
    try {
      const initialised = model !== undefined && model.source.kind !== 'not-initialised' && model.source.kind !== 'loading';
      const facts = initialised
        ? await readSetupFacts(model.root, model.containerFile?.remote ?? 'origin')
        : { committed: false, hooks: false, serverGuard: false };
      await this.set(SetupKeys.initialised, initialised);
      await this.set(SetupKeys.held, model?.status?.state === LockState.HeldByMe);
      for (const [key, value] of Object.entries(facts) as [keyof SetupFacts, boolean][]) await this.set(SetupKeys[key], value);
      if (model && facts.committed && facts.hooks && facts.serverGuard) this.done.add(model);
    } catch (error) {
      this.log.debug(`${model?.folder.name ?? 'workspace'}: setup check failed: ${(error as Error).message}`);
    } finally {
      this.checking = false;
    }
  }

  private async set(key: string, value: boolean): Promise<void> {
    if (this.values.get(key) === value) return;
    this.values.set(key, value);
    await vscode.commands.executeCommand('setContext', key, value);
  }

  dispose(): void {
    clearInterval(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
