import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { chooseGitProgram, type GitProgram, useGitProgram } from '../core/application';

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
  /** The git program the extension found (its git.path setting, else its search of the usual install folders). */
  readonly git?: { readonly path?: string };
  getRepository(uri: vscode.Uri): GitExtensionRepository | null;
  openRepository?(root: vscode.Uri): Promise<GitExtensionRepository | null>;
}

interface GitExtensionExports {
  readonly enabled: boolean;
  getAPI(version: 1): GitExtensionApi;
}

/** The git extension's repository for the clone at `root`; undefined when the extension is absent, disabled or does not know it. */
export async function gitExtensionRepository(root: string): Promise<GitExtensionRepository | undefined> {
  const api = await gitExtensionApi();
  if (!api) return undefined;
  const uri = vscode.Uri.file(root);
  return api.getRepository(uri) ?? (await api.openRepository?.(uri)) ?? undefined;
}

/** The git extension's API (version 1), activating it if needed; undefined when it is absent or disabled. */
async function gitExtensionApi(): Promise<GitExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension<GitExtensionExports>('vscode.git');
  if (!extension) return undefined;
  const exports = extension.isActive ? extension.exports : await extension.activate();
  return exports?.enabled ? exports.getAPI(1) : undefined;
}

/** What the git extension's error says git printed (its `stderr`), else its message. */
export function gitExtensionStderr(error: unknown): string {
  const e = error as { stderr?: unknown; message?: unknown };
  return typeof e?.stderr === 'string' && e.stderr !== '' ? e.stderr : typeof e?.message === 'string' ? e.message : '';
}

/**
 * Every git that Lockstep runs in this extension host is the one VS Code uses (core's gitProgram.ts):
 * the git extension's resolved path once it is active, before that the user's `git.path` setting
 * (user settings only: a workspace cannot name a program to run), else git on PATH. Read again when
 * `git.path` changes.
 */
export function followVsCodeGit(onChange: (program: GitProgram) => void): vscode.Disposable {
  const apply = (extensionPath: string | undefined) => {
    const setting = vscode.workspace.getConfiguration('git').inspect<unknown>('path')?.globalValue;
    const program = chooseGitProgram({ extensionPath, setting }, file => fs.statSync(file, { throwIfNoEntry: false })?.isFile() === true);
    useGitProgram(program);
    onChange(program);
  };
  apply(undefined);
  const fromExtension = async () => apply(await gitExtensionPath().catch(() => undefined));
  void fromExtension();
  return vscode.workspace.onDidChangeConfiguration(e => {
    if (e.affectsConfiguration('git.path')) void fromExtension();
  });
}

/** The git program VS Code's git extension runs; undefined when the extension is absent or disabled. */
async function gitExtensionPath(): Promise<string | undefined> {
  return (await gitExtensionApi())?.git?.path;
}
