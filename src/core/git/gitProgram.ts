import * as path from 'node:path';

/**
 * Which git program the one runner ({@link GitRunner}) starts. The command line, both hooks and the
 * server guard run `git` from the PATH of their process (the server guard pins that PATH itself);
 * nothing here reads the environment, so no variable can point any of them at another program. The
 * VS Code extension finds git as VS Code does: the program VS Code's own git extension resolved
 * (its `git.path` setting, else its search of the usual install folders, which on Windows finds Git
 * for Windows without it being on PATH), chosen with {@link chooseGitProgram} and set once per
 * extension host with {@link useGitProgram}.
 */
export interface GitProgram {
  /** `git` (looked up on PATH) or an absolute path. */
  readonly program: string;
  /** Where it came from, for messages: PATH, VS Code's git extension, or the `git.path` setting. */
  readonly source: 'path' | 'vscode' | 'setting';
}

export const GIT_ON_PATH: GitProgram = { program: 'git', source: 'path' };

let current: GitProgram = GIT_ON_PATH;

/** The program every git run of this process starts. */
export function gitProgram(): GitProgram {
  return current;
}

/** Sets the program for every later git run of this process (the extension host only). */
export function useGitProgram(program: GitProgram): void {
  current = program;
}

/** What VS Code says about git: its git extension's resolved path, and the user's `git.path` setting (a path or a list of paths). */
export interface VsCodeGit {
  readonly extensionPath?: string | undefined;
  readonly setting?: unknown;
}

/**
 * The git program of the extension: the one VS Code's git extension runs when it found one, else
 * the first path of the `git.path` setting that is a file (`exists`), else git on PATH. Only absolute
 * paths count: a relative one would name a program in whatever folder the host runs in.
 */
export function chooseGitProgram(vscode: VsCodeGit, exists: (file: string) => boolean): GitProgram {
  if (usable(vscode.extensionPath)) return { program: vscode.extensionPath, source: 'vscode' };
  const listed = typeof vscode.setting === 'string' ? [vscode.setting] : Array.isArray(vscode.setting) ? vscode.setting : [];
  for (const candidate of listed) if (usable(candidate) && exists(candidate)) return { program: candidate, source: 'setting' };
  return GIT_ON_PATH;
}

function usable(candidate: unknown): candidate is string {
  return typeof candidate === 'string' && candidate !== '' && (path.isAbsolute(candidate) || path.win32.isAbsolute(candidate));
}
