import * as vscode from 'vscode';
import { settingsFrom, type ExtensionSettings } from './settingValues';

export type { ExtensionSettings } from './settingValues';

/** `lockstep.*` settings of the scope (a workspace folder), each checked against its bounds (settingValues.ts). */
export function readSettings(scope?: vscode.Uri): ExtensionSettings {
  const c = vscode.workspace.getConfiguration('lockstep', scope);
  return settingsFrom(key => c.get<unknown>(key));
}
