import * as vscode from 'vscode';

/**
 * The part of VS Code's built-in git extension API (version 1, `vscode.git`) that Lockstep uses: a
 * repository's push, which runs with the user's credentials, askpass and output as the Source Control
 * view's Push does. Declared here, not copied from git.d.ts: three members are all Lockstep needs.
 */
export interface GitExtensionRepository {
  readonly rootUri: vscode.Uri;
  push(remoteName?: string, branchName?: string, setUpstream?: boolean): Promise<void>;
}

interface GitExtensionApi {
  getRepository(uri: vscode.Uri): GitExtensionRepository | null;
  openRepository?(root: vscode.Uri): Promise<GitExtensionRepository | null>;
}

interface GitExtensionExports {
  readonly enabled: boolean;
  getAPI(version: 1): GitExtensionApi;
}

/** The git extension's repository for the clone at `root`; undefined when the extension is absent, disabled or does not know it. */
export async function gitExtensionRepository(root: string): Promise<GitExtensionRepository | undefined> {
  const extension = vscode.extensions.getExtension<GitExtensionExports>('vscode.git');
  if (!extension) return undefined;
  const exports = extension.isActive ? extension.exports : await extension.activate();
  if (!exports?.enabled) return undefined;
  const api = exports.getAPI(1);
  const uri = vscode.Uri.file(root);
  return api.getRepository(uri) ?? (await api.openRepository?.(uri)) ?? undefined;
}

/** What the git extension's error says git printed (its `stderr`), else its message. */
export function gitExtensionStderr(error: unknown): string {
  const e = error as { stderr?: unknown; message?: unknown };
  return typeof e?.stderr === 'string' && e.stderr !== '' ? e.stderr : typeof e?.message === 'string' ? e.message : '';
}
