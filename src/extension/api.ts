import type * as vscode from 'vscode';
import type { LockLeaseLostError, LockStatus } from '../core/application';
import { badgeFor, type Badge } from './badge';
import type { ContainerModel } from './containerModel';
import type { WorkspaceModel } from './workspaceModel';

/**
 * Lockstep's extension API, for other extensions and tests, in the shape of VS Code's git
 * extension (`getAPI(1)`):
 *
 * ```ts
 * const lockstep = vscode.extensions.getExtension<LockstepExtension>('lockstep.lockstep')!.exports.getAPI(1);
 * lockstep.onDidChangeContainer(view => console.log(view.folder, view.status?.state));
 * ```
 *
 * Version 1 is read-only: it exposes state and events, never an operation that acts on a lock (use
 * the `lockstep.*` commands, which ask the user) and never a token. Versioning policy: a member is
 * never removed or changed within a version; what a later version replaces stays in the older
 * version marked `@deprecated`, with the replacement named, for at least one minor release.
 */
export interface LockstepExtension {
  /** The API of `version`. Only version 1 exists; any other throws. */
  getAPI(version: 1): LockstepAPI;
}

/** Version 1. */
export interface LockstepAPI {
  readonly version: 1;
  /** The status-bar badge as rendered now (state word, text, tooltip, severity). */
  badge(): Badge;
  /** The badge's text, codicons included. */
  statusText(): string;
  /** The container of the active editor's folder (else the first), or undefined. */
  activeContainer(): ContainerView | undefined;
  /** Every container of the window (one per workspace folder with `.lockstep.json`). */
  containers(): readonly ContainerView[];
  /** Fires when the active container changes. */
  readonly onDidChangeActiveContainer: vscode.Event<ContainerView | undefined>;
  /** Fires after any container re-read its lock (its status may or may not differ). */
  readonly onDidChangeContainer: vscode.Event<ContainerView>;
  /** Milliseconds `activate` took. */
  readonly activationMs: number;
  /** The last lines of the "Lockstep" log, oldest first, as `[level] message` (never a token). */
  logLines(): readonly string[];
}

/** One container, read-only. */
export interface ContainerView {
  /** The workspace folder's path. */
  readonly folder: string;
  /** The last status read; undefined while loading, offline or not initialised. */
  readonly status: LockStatus | undefined;
  /** This container's badge as it would be rendered now. */
  readonly badge: Badge;
  /** Fires after every re-read of this container's lock. */
  readonly onDidChange: vscode.Event<ContainerView>;
  /** Fires when this person becomes the one who may acquire (queue head after a release or expiry). */
  readonly onDidBecomeTurn: vscode.Event<LockStatus>;
  /** Fires once per grant when this window's lease is lost (expired, superseded, or past expiry while offline). */
  readonly onDidLoseLease: vscode.Event<LockLeaseLostError>;
}

/** Builds the extension's exports. Views are frozen objects of getters: nothing in them reaches a model's operations. */
export function createExtensionApi(
  workspace: WorkspaceModel,
  badge: () => Badge,
  activationMs: number,
  logLines: () => readonly string[],
): LockstepExtension {
  const views = new WeakMap<ContainerModel, ContainerView>();
  const viewOf = (model: ContainerModel): ContainerView => {
    let view = views.get(model);
    if (view === undefined) {
      const made: ContainerView = Object.freeze({
        get folder() {
          return model.folder.uri.fsPath;
        },
        get status() {
          return model.status;
        },
        get badge() {
          return badgeFor(model.source, Date.now());
        },
        onDidChange: (listener: (v: ContainerView) => unknown, thisArg?: unknown, disposables?: vscode.Disposable[]) =>
          model.onDidChange(() => listener.call(thisArg, made), undefined, disposables),
        onDidBecomeTurn: model.onDidBecomeTurn,
        onDidLoseLease: model.onDidLoseLease,
      });
      views.set(model, made);
      view = made;
    }
    return view;
  };
  const api: LockstepAPI = Object.freeze({
    version: 1 as const,
    badge,
    statusText: () => badge().text,
    activeContainer: () => (workspace.active ? viewOf(workspace.active) : undefined),
    containers: () => workspace.all.map(viewOf),
    onDidChangeActiveContainer: (
      listener: (v: ContainerView | undefined) => unknown,
      thisArg?: unknown,
      disposables?: vscode.Disposable[],
    ) => workspace.onDidChangeActive(m => listener.call(thisArg, m ? viewOf(m) : undefined), undefined, disposables),
    onDidChangeContainer: (listener: (v: ContainerView) => unknown, thisArg?: unknown, disposables?: vscode.Disposable[]) =>
      workspace.onDidChangeAnyModel(m => listener.call(thisArg, viewOf(m)), undefined, disposables),
    activationMs,
    logLines,
  });
  return Object.freeze({
    getAPI(version: number): LockstepAPI {
      if (version !== 1) throw new Error(`Lockstep API version ${version} does not exist; use getAPI(1).`);
      return api;
    },
  }) as LockstepExtension;
}
