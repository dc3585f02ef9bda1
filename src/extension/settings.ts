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
  /** `warn` (one warning per session) or `readOnly` (editors of the container's files are read-only). */
  readonly whileLockedByOthers: 'warn' | 'readOnly';
  /** Globs (relative to the workspace folder) of files that stay writable under `readOnly`. */
  readonly readOnlyExclude: readonly string[];
  /** Tell the holder of each new petition with a notification (the badge counts them either way). */
  readonly notifyPetitions: boolean;
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
    whileLockedByOthers: c.get<string>('whileLockedByOthers', 'warn') === 'readOnly' ? 'readOnly' : 'warn',
    readOnlyExclude: c.get<string[]>('readOnlyExclude', []).filter(g => typeof g === 'string' && g.trim() !== ''),
    notifyPetitions: c.get<boolean>('notifyPetitions', true),
  };
}
