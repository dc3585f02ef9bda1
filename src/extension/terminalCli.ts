import * as fs from 'node:fs';
import * as path from 'node:path';
import { shellQuote, writeFileAtomically } from '../core/application';
import * as vscode from 'vscode';
import type { Log } from './log';

/** The folder (in the extension's global storage) whose `lockstep` runs this version's bundled CLI. */
export function terminalBinDir(context: vscode.ExtensionContext): string {
  return path.join(context.globalStorageUri.fsPath, 'bin');
}

/**
 * The launchers: `lockstep` (sh) and `lockstep.cmd` (Windows). They run the CLI bundled with this
 * version of the extension with the Node that runs VS Code's extension host (Electron on the
 * desktop, which runs a script as Node only with ELECTRON_RUN_AS_NODE). Pure: paths in, text out.
 */
export function launchers(node: string, cli: string, electron: boolean): { readonly sh: string; readonly cmd: string } {
  const note = 'Written by the Lockstep extension at each start: the CLI of the version that runs.';
  return {
    sh: `#!/bin/sh\n# ${note}\n${electron ? 'ELECTRON_RUN_AS_NODE=1 ' : ''}exec ${shellQuote(node)} ${shellQuote(cli)} "$@"\n`,
    cmd: `@echo off\r\nrem ${note}\r\n${electron ? 'set ELECTRON_RUN_AS_NODE=1\r\n' : ''}"${node}" "${cli}" %*\r\n`,
  };
}

/**
 * Puts `lockstep` on the PATH of VS Code's integrated terminals (new ones; VS Code offers to relaunch
 * open ones), so every `lockstep …` a tooltip or a notification names runs there as written, with the
 * CLI this extension bundles. A `lockstep` installed on the machine (npm install -g) comes after it.
 */
export function putCliOnTerminalPath(context: vscode.ExtensionContext, log: Log): void {
  const bin = terminalBinDir(context);
  const cli = vscode.Uri.joinPath(context.extensionUri, 'dist', 'cli.js').fsPath;
  try {
    fs.mkdirSync(bin, { recursive: true });
    const { sh, cmd } = launchers(process.execPath, cli, process.versions.electron !== undefined);
    writeIfChanged(path.join(bin, 'lockstep'), sh, 0o755);
    writeIfChanged(path.join(bin, 'lockstep.cmd'), cmd, 0o644);
  } catch (error) {
    log.warn(
      `The lockstep command could not be put on the integrated terminal's PATH: ${error instanceof Error ? error.message : String(error)}`,
    );
    return;
  }
  const collection = context.environmentVariableCollection;
  collection.description = 'Puts the lockstep command line (bundled with the Lockstep extension) on PATH.';
  collection.prepend('PATH', bin + path.delimiter);
}

/** Replaced atomically (write, then rename) and only when different, so a terminal never runs half a file. */
function writeIfChanged(file: string, text: string, mode: number): void {
  try {
    if (fs.readFileSync(file, 'utf8') === text) return;
  } catch {
    // not there yet
  }
  writeFileAtomically(file, text, 'The lockstep launcher for terminals', { mode });
}
