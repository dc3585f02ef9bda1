// The tests' side of the container the runner prepared (test/vscode/harness/fixture.mjs): alice's clone is the
// workspace folder (the extension acts as alice); bob (a coworker) and ops (the operator) act through core's
// Container on bob's clone, or through the built CLI, on the same file store. Between tests the lock is brought
// back to Free by real operations only (release, operator clear, withdraw).
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Container } from '../../../src/core/container/container';
import type { LockStatus } from '../../../src/core/lockStatus';
import type { Badge } from '../../../src/extension/badge';
import type { LockstepAPI, LockstepExtension } from '../../../src/extension/api';
import { grantLapsing, type LapsingGrant } from '../../helpers/lapsingGrant';
import { until } from './until';

export const ALICE = 'alice@example.com';
export const BOB = 'bob@example.com';
export const OPS = 'ops@example.com';
export const EXTENSION_ID = 'lockstep.lockstep';

function required(name: string): string {
  const value = process.env[name];
  assert.ok(value, `${name} is set by the runner (test/vscode/harness/runExtensionTests.mjs)`);
  return value;
}

export const fixture = {
  get alice(): string {
    return vscode.workspace.workspaceFolders![0].uri.fsPath;
  },
  get bob(): string {
    return required('LOCKSTEP_TEST_COWORKER_CLONE');
  },
  get store(): string {
    return required('LOCKSTEP_PATH');
  },
  get cli(): string {
    return required('LOCKSTEP_TEST_CLI');
  },
};

/** The extension's API once it is active. */
export async function lockstepApi(): Promise<LockstepAPI> {
  const extension = vscode.extensions.getExtension<LockstepExtension>(EXTENSION_ID);
  assert.ok(extension, `${EXTENSION_ID} is loaded`);
  await until('the extension to be active', () => extension.isActive, 15_000);
  return extension.exports.getAPI(1);
}

/** Runs `action` with a Container opened as `identity` in `clone` (bob's by default), then closes it. */
export async function as<T>(identity: string, action: (c: Container) => Promise<T>, clone = fixture.bob): Promise<T> {
  const container = await Container.open({ cwd: clone, env: { ...process.env, LOCKSTEP_IDENTITY: identity } });
  try {
    return await action(container);
  } finally {
    await container.close();
  }
}

/**
 * A grant as `identity` in `clone` (bob's by default) with the shortest lease (the container's 60 s), dated so that
 * it runs out `lapseMs` from now: core's real Container on the real store, only its clock dated back
 * (test/helpers/lapsingGrant.ts). For a holder that goes silent within a test's deadline.
 */
export function lapsingGrantAs(identity: string, clone = fixture.bob, lapseMs = 1_000): Promise<LapsingGrant> {
  return grantLapsing({ cwd: clone, env: { ...process.env, LOCKSTEP_IDENTITY: identity }, lapseMs });
}

/** The lock as `identity` sees it, read from the store now. */
export function statusAs(identity: string, clone = fixture.bob): Promise<LockStatus> {
  return as(identity, c => c.status(), clone);
}

export interface CliResult {
  readonly code: number;
  readonly json: { ok: boolean; [key: string]: unknown };
}

/**
 * `lockstep --json ARGS` from the built CLI in `clone` (a real child process, as a coworker at a terminal).
 * The identity is the clone's git user.email unless given.
 */
export function cli(clone: string, args: readonly string[], identity?: string): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, ELECTRON_RUN_AS_NODE: '1' };
  if (identity) env.LOCKSTEP_IDENTITY = identity;
  else delete env.LOCKSTEP_IDENTITY;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [fixture.cli, '--json', ...args], { cwd: clone, env, timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      try {
        resolve({ code, json: JSON.parse(stdout) });
      } catch {
        reject(new Error(`lockstep ${args.join(' ')} printed no JSON (exit ${code}): ${stdout}${stderr}`));
      }
    });
  });
}

/** git in a clone; resolves with stdout, rejects with stderr. */
export function git(clone: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd: clone, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`git ${args.join(' ')}: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

/** A committed (not pushed) change in alice's clone. */
export async function commitInAlice(name: string, text: string): Promise<void> {
  fs.writeFileSync(path.join(fixture.alice, name), text);
  await git(fixture.alice, 'add', name);
  await git(fixture.alice, 'commit', '--quiet', '-m', `Change ${name}`);
}

/** Waits until the rendered badge is in `state`; the message names what it shows instead. */
export async function badgeBecomes(api: LockstepAPI, state: string, timeoutMs = 10_000): Promise<Badge> {
  await until(`the badge to turn ${state}`, () => api.badge().state === state, timeoutMs).catch(error => {
    throw new Error(`${(error as Error).message}; it shows ${JSON.stringify(api.statusText())} (${api.badge().state})`);
  });
  return api.badge();
}

/**
 * Brings the container back to Free with no queue and alice's clone holding no session, through real operations:
 * the live holder releases (every test leaves its clone pushed), a silent one is cleared by the operator,
 * waiters withdraw, and a stale session of alice's is replaced by one acquire-and-release. Then waits for the
 * badge to say Free.
 */
export async function resetToFree(api: LockstepAPI): Promise<void> {
  // A test that failed midway may leave an edit on disk; it would refuse every later release (and fail every
  // later test in a cascade), so the clones' tracked files go back to their last commit first.
  for (const clone of [fixture.alice, fixture.bob]) await git(clone, 'checkout', '--', '.');
  for (let round = 0; round < 5; round++) {
    const status = await statusAs(OPS);
    const holder = status.holder;
    if (holder && holder.expiresAt > Date.now()) {
      const clone = holder.identity === ALICE ? fixture.alice : fixture.bob;
      await as(holder.identity, c => c.release(), clone);
      continue;
    }
    if (holder) {
      await as(OPS, c => c.clear('reset between tests'));
      continue;
    }
    for (const waiter of status.queue) {
      await as(waiter.identity, c => c.withdraw(), waiter.identity === ALICE ? fixture.alice : fixture.bob);
    }
    if (status.queue.length > 0) continue;
    // A clear or a takeover left the caution mark (it shows in the badge's text): only a holder's release after a
    // landing ends it (a release with nothing landed keeps it), so alice lands an empty commit under her grant.
    if (status.caution !== null) {
      await as(
        ALICE,
        async c => {
          await c.acquire();
          await git(fixture.alice, 'pull', '--quiet', '--rebase', 'origin', 'main');
          await git(fixture.alice, 'commit', '--quiet', '--allow-empty', '-m', 'reset between tests');
          await git(fixture.alice, 'push', '--quiet', 'origin', 'HEAD:refs/heads/main');
          await c.release();
        },
        fixture.alice,
      );
      continue;
    }
    const alice = await statusAs(ALICE, fixture.alice);
    if (alice.staleGrant !== null) {
      await as(
        ALICE,
        async c => {
          await c.acquire();
          await c.release();
        },
        fixture.alice,
      );
      continue;
    }
    await badgeBecomes(api, 'free');
    return;
  }
  throw new Error(`the lock did not come back to Free: ${JSON.stringify(await statusAs(OPS))}`);
}

/** Dismisses every notification (a non-modal message's promise then resolves with undefined). */
export async function dismissNotifications(): Promise<void> {
  await vscode.commands.executeCommand('notifications.clearAll');
}

/** Closes every editor without saving (an unsaved edit never reaches the clone) and dismisses every notification. */
export async function closeEditorsAndNotifications(): Promise<void> {
  for (let i = 0; i < 4 && vscode.window.activeTextEditor; i++)
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  await dismissNotifications();
}

/**
 * Edits `file` (relative to alice's clone) in an editor and waits until the extension has seen the edit (its
 * listener was registered before this one: once this one has seen it, so has the extension's), then reverts it
 * at once, before the host's auto-save (code-server saves after a delay) can write it into the clone.
 */
export async function editAndRevert(file: string, text: string): Promise<void> {
  const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(path.join(fixture.alice, file)));
  let seen = false;
  const listener = vscode.workspace.onDidChangeTextDocument(e => {
    if (e.document === editor.document && e.contentChanges.length > 0) seen = true;
  });
  try {
    assert.ok(await editor.edit(e => e.insert(new vscode.Position(0, 0), text)), 'the edit was applied');
    await until('the edit to be delivered', () => seen);
  } finally {
    listener.dispose();
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    await git(fixture.alice, 'checkout', '--', file);
  }
}
