import * as vscode from 'vscode';
import type { Container } from '../core/container/container';
import { pushProtectedBranch as push } from '../core/container/push';

/** Pushes the protected branch to the shared remote with a progress notification (src/core/container/push.ts). */
export async function pushProtectedBranch(container: Container): Promise<void> {
  const branch = container.file.protectedBranches[0] ?? 'main';
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Lockstep: pushing ${branch} to ${container.file.remote}…` },
    () => push(container));
}
