import * as vscode from 'vscode';
import { knownIdentities, LockError, LockErrorCode } from '../../core/application';
import { badgeFor, badgeWords } from '../badge';
import type { ContainerModel } from '../containerModel';
import type { Log } from '../log';
import type { WorkspaceModel } from '../workspaceModel';

/** What every command handler needs. */
export interface CommandContext {
  readonly workspace: WorkspaceModel;
  readonly log: Log;
  readonly extensionUri: vscode.Uri;
  /** The extension's own folder for files it writes (global storage). */
  readonly storageUri: vscode.Uri;
  readonly showLockPage: () => void;
}

/** The active container, or a message saying why there is none. */
export function activeModel(ctx: CommandContext): ContainerModel | undefined {
  const model = ctx.workspace.active;
  if (!model) {
    void vscode.window.showInformationMessage(
      'Lockstep: no container here. Open a repository with .lockstep.json, or run "Lockstep: Initialise Container".',
    );
  }
  return model;
}

/**
 * The container a command acts on: the one named by `target` (a workspace folder URI, as the lock page
 * passes), else the only one, else the person's choice among every container of the window (each with its
 * state; the active one first). Undefined when they backed out or there is none.
 */
export async function chooseModel(ctx: CommandContext, placeHolder: string, target?: unknown): Promise<ContainerModel | undefined> {
  const all = ctx.workspace.all;
  if (target instanceof vscode.Uri) {
    const named = all.find(m => m.folder.uri.toString() === target.toString());
    if (named) return named;
  }
  if (all.length <= 1) return activeModel(ctx);
  const active = ctx.workspace.active;
  const ordered = [...all].sort((a, b) => Number(b === active) - Number(a === active));
  const picked = await vscode.window.showQuickPick(
    ordered.map(model => ({
      label: model.folder.name,
      description: badgeWords(badgeFor(model.source, Date.now())),
      detail: model.folder.uri.fsPath,
      model,
    })),
    { placeHolder },
  );
  return picked?.model;
}

/** Writes are not allowed in restricted mode: the lock is shown, never changed. The refusal is logged too. */
export function requireTrust(ctx: CommandContext): boolean {
  if (vscode.workspace.isTrusted) return true;
  const message = 'Lockstep is read-only in an untrusted workspace: trust the folder to acquire, release or install hooks.';
  ctx.log.warn(message);
  void vscode.window.showWarningMessage(message);
  return false;
}

/**
 * Errors are translated once, here, by type — never by matching text. Refusals are warnings
 * (someone else's turn is not a failure); outages and damage are errors with the log at hand.
 */
export async function report(ctx: CommandContext, what: string, error: unknown): Promise<void> {
  ctx.log.error(what, error);
  if (!(error instanceof LockError)) {
    const choice = await vscode.window.showErrorMessage(`Lockstep: ${what} failed unexpectedly.`, 'Show Log');
    if (choice) ctx.log.show();
    return;
  }
  switch (error.code) {
    case LockErrorCode.Refused:
    case LockErrorCode.Busy:
    case LockErrorCode.Fenced:
    case LockErrorCode.Ownership:
      void vscode.window.showWarningMessage(`Lockstep: ${error.message}`);
      return;
    case LockErrorCode.LeaseLost:
      void vscode.window.showErrorMessage(`Lockstep: ${error.message}`);
      return;
    default: {
      const choice = await vscode.window.showErrorMessage(`Lockstep: ${error.message}`, 'Show Log');
      if (choice) ctx.log.show();
    }
  }
}

/** Runs a handler and reports its error; handlers stay one to three lines. */
export function guarded<A extends unknown[]>(
  ctx: CommandContext,
  what: string,
  handler: (...args: A) => Promise<unknown>,
): (...args: A) => Promise<unknown> {
  return async (...args: A) => {
    try {
      return await handler(...args);
    } catch (error) {
      await report(ctx, what, error);
      return undefined;
    }
  };
}

/** Coworkers to offer in pickers: the queue first, then everyone with a range or a block. */
export async function pickCoworker(model: ContainerModel, placeHolder: string): Promise<string | undefined> {
  const known = [...(model.record ? knownIdentities(model.record) : [])].filter(who => who !== model.identity);
  const typeOne = '$(edit) Type an identity…';
  const picked = known.length === 0 ? typeOne : await vscode.window.showQuickPick([...known, typeOne], { placeHolder });
  if (picked === undefined) return undefined;
  if (picked !== typeOne) return picked;
  const typed = await vscode.window.showInputBox({
    prompt: 'Coworker identity (usually their git e-mail)',
    validateInput: v => (v.trim() ? undefined : 'Enter an identity'),
  });
  return typed?.trim() || undefined;
}

/**
 * A lease or block for an identity the lock page has never seen is most likely a typo: ask first.
 * Returns whether the identity is new (confirmed), or undefined when the user backed out.
 */
export async function confirmIdentity(model: ContainerModel, who: string): Promise<boolean | undefined> {
  if (model.record && knownIdentities(model.record).has(who)) return false;
  const yes = 'Yes, a New Teammate';
  const choice = await vscode.window.showWarningMessage(
    `${who} has never appeared on this lock page. Is this a new teammate (and not a typo)?`,
    { modal: true },
    yes,
  );
  return choice === yes ? true : undefined;
}
