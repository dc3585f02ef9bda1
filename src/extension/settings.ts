import * as vscode from 'vscode';
import type { LockManagerOptions } from '../core/config';

/** `lockstep.*` settings, read at the edge and handed to core as plain options. */
export interface ExtensionSettings {
  /** Overrides `git config user.email` (LOCKSTEP_IDENTITY still wins). */
  readonly identity: string | undefined;
  readonly acquireOnEdit: boolean;
  readonly showBadge: boolean;
  readonly logLevel: 'error' | 'warn' | 'info' | 'debug' | 'trace';
  /** Poll interval for drivers that cannot push changes (seconds). */
  readonly pollSeconds: number;
  /** Driver options between the environment and `.lockstep.json`. */
  readonly store: LockManagerOptions;
}

export function readSettings(scope?: vscode.Uri): ExtensionSettings {
  const c = vscode.workspace.getConfiguration('lockstep', scope);
  const identity = c.get<string>('identity', '').trim();
  const storePath = c.get<string>('store.path', '').trim();
  return {
    identity: identity === '' ? undefined : identity,
    acquireOnEdit: c.get<boolean>('acquireOnEdit', true),
    showBadge: c.get<boolean>('showBadge', true),
    logLevel: c.get<ExtensionSettings['logLevel']>('logLevel', 'info'),
    pollSeconds: Math.max(1, c.get<number>('pollSeconds', 10)),
    store: storePath === '' ? {} : { path: storePath },
  };
}
