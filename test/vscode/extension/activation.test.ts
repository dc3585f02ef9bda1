import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { LockstepExtension } from '../../../src/extension/api';
import { until } from './until';

const EXTENSION_ID = 'lockstep.lockstep';

interface ContributedCommand {
  command: string;
  title: string;
  category?: string;
}

suite('activation in a real extension host', () => {
  let extension: vscode.Extension<LockstepExtension>;

  suiteSetup(() => {
    const found = vscode.extensions.getExtension<LockstepExtension>(EXTENSION_ID);
    assert.ok(found, `${EXTENSION_ID} is loaded`);
    extension = found;
  });

  test('the workspace is a folder with .lockstep.json', async () => {
    const folders = vscode.workspace.workspaceFolders ?? [];
    assert.equal(folders.length, 1);
    const found = await vscode.workspace.findFiles('.lockstep.json');
    assert.equal(found.length, 1);
  });

  test('activates by itself on workspaceContains:.lockstep.json (nobody calls activate)', async () => {
    assert.deepEqual(extension.packageJSON.activationEvents, ['workspaceContains:.lockstep.json']);
    await until('the extension to be active', () => extension.isActive, 15_000);
  });

  test('shows the Lockstep status-bar item: a codicon, then the state', () => {
    // Which state (free, held, not initialised…) belongs to the badge tests; here only that it is there.
    const api = extension.exports.getAPI(1);
    assert.match(api.statusText(), /^\$\([\w~-]+\) \S/);
    console.log(`      activation took ${api.activationMs.toFixed(1)} ms`);
  });

  test('the API is versioned and read-only: getAPI(1) exposes state and events, never an operation', async () => {
    assert.deepEqual(Object.keys(extension.exports), ['getAPI']);
    assert.throws(() => (extension.exports.getAPI as (v: number) => unknown)(2), /version 2 does not exist/);
    const api = extension.exports.getAPI(1);
    assert.equal(api.version, 1);
    assert.deepEqual(Object.keys(api).sort(), [
      'activationMs',
      'activeContainer',
      'badge',
      'containers',
      'logLines',
      'onDidChangeActiveContainer',
      'onDidChangeContainer',
      'statusText',
      'version',
    ]);
    assert.ok(Object.isFrozen(api));
    await until('a container to be known', () => api.activeContainer() !== undefined, 15_000);
    const view = api.activeContainer()!;
    assert.equal(api.containers()[0], view, 'one view per container');
    assert.deepEqual(Object.keys(view).sort(), ['badge', 'folder', 'onDidBecomeTurn', 'onDidChange', 'onDidLoseLease', 'status']);
    assert.ok(Object.isFrozen(view));
    assert.throws(() => {
      (view as { status: unknown }).status = undefined;
    }, TypeError);
    for (const operation of ['act', 'acquire', 'release', 'refresh', 'reopen', 'heartbeat', 'container']) {
      assert.equal(operation in view, false, `a view has no ${operation}`);
      assert.equal(operation in api, false, `the API has no ${operation}`);
    }
    assert.equal(view.badge.state, api.badge().state);
  });

  test('lockstep.showLog is registered and opens the log without an error', async () => {
    const all = await vscode.commands.getCommands(true);
    assert.ok(all.includes('lockstep.showLog'));
    await vscode.commands.executeCommand('lockstep.showLog');
  });

  test('the commands registered are exactly those in package.json, each in category Lockstep', async () => {
    const contributed: ContributedCommand[] = extension.packageJSON.contributes.commands;
    const declared = contributed.map(c => c.command).sort();
    const registered = (await vscode.commands.getCommands(true)).filter(c => c.startsWith('lockstep.')).sort();
    assert.deepEqual(registered, declared);
    assert.deepEqual(
      contributed.filter(c => c.category !== 'Lockstep').map(c => c.command),
      [],
    );
  });

  test('runs workspace-side as declared, with limited support for untrusted folders', () => {
    assert.equal(extension.extensionKind, vscode.ExtensionKind.Workspace);
    assert.equal(extension.packageJSON.capabilities.untrustedWorkspaces.supported, 'limited');
  });
});
