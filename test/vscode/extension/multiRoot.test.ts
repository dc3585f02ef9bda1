import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LockstepAPI } from '../../../src/extension/api';
import { ALICE, BOB, OPS, as, badgeBecomes, dismissNotifications, fixture, lockstepApi, statusAs } from './backend';
import { until } from './until';

// A multi-root workspace (runExtensionTests.mjs --workspace multi-root --tests multiRoot): alice's clones of two
// containers on one store, folder 0 the usual fixture and folder 1 "second". Bob acts on each through his own clone.
function required(name: string): string {
  const value = process.env[name];
  assert.ok(value, `${name} is set by the runner with --workspace multi-root`);
  return value;
}
const second = {
  get alice(): string {
    return required('LOCKSTEP_TEST_SECOND_CLONE');
  },
  get bob(): string {
    return required('LOCKSTEP_TEST_SECOND_COWORKER_CLONE');
  },
};

async function openIn(folder: string, file: string): Promise<void> {
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(path.join(folder, file)));
}

/** Runs `command` while accepting whatever quick pick it shows (the first item: the active container). */
async function acceptingQuickPick<T>(command: string): Promise<T | undefined> {
  let settled = false;
  const result = Promise.resolve(vscode.commands.executeCommand<T>(command)).finally(() => {
    settled = true;
  });
  await until(
    `${command} to finish after its quick pick`,
    async () => {
      if (!settled) await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      return settled;
    },
    15_000,
  );
  return result;
}

suite('a multi-root workspace with two containers', () => {
  let api: LockstepAPI;
  suiteSetup(async () => {
    api = await lockstepApi();
  });
  teardown(dismissNotifications);
  suiteTeardown(() => vscode.commands.executeCommand('workbench.action.closeAllEditors'));

  test('one container per folder, both read', async () => {
    assert.deepEqual(
      (vscode.workspace.workspaceFolders ?? []).map(f => f.uri.fsPath),
      [fixture.alice, second.alice],
    );
    await until(
      'both containers to be read',
      () => api.containers().length === 2 && api.containers().every(c => c.status !== undefined),
      15_000,
    );
    assert.deepEqual(
      api
        .containers()
        .map(c => c.folder)
        .sort(),
      [fixture.alice, second.alice].sort(),
    );
  });

  test("the badge follows the active editor's folder", async () => {
    await as(BOB, c => c.acquire(), second.bob);
    await openIn(second.alice, 'docs/plan.md');
    await until('the second container to be active', () => api.activeContainer()?.folder === second.alice);
    assert.equal((await badgeBecomes(api, 'held-by-other')).text, '$(lock) Held by bob');
    await openIn(fixture.alice, 'src/greeting.ts');
    await until('the first container to be active', () => api.activeContainer()?.folder === fixture.alice);
    assert.equal((await badgeBecomes(api, 'free')).text, '$(unlock) Free');
    await openIn(second.alice, 'docs/plan.md');
    await badgeBecomes(api, 'held-by-other');
  });

  test("Acquire asks which container, the active editor's first, and acquires that one only", async () => {
    await openIn(fixture.alice, 'src/greeting.ts');
    await until('the first container to be active', () => api.activeContainer()?.folder === fixture.alice);
    const grant = await acceptingQuickPick<number>('lockstep.acquire');
    assert.equal(typeof grant, 'number');
    await badgeBecomes(api, 'held-by-me');
    assert.equal((await statusAs(OPS, fixture.bob)).holder?.identity, ALICE, "the first container is alice's");
    assert.equal((await statusAs(OPS, second.bob)).holder?.identity, BOB, "the second is still bob's");
  });

  test("Petition and Release act on the active editor's container", async () => {
    await openIn(second.alice, 'docs/plan.md');
    await badgeBecomes(api, 'held-by-other');
    assert.equal(await vscode.commands.executeCommand<number>('lockstep.petition', 'after bob'), 1);
    await badgeBecomes(api, 'queued');
    assert.deepEqual(
      (await statusAs(OPS, second.bob)).queue.map(w => w.identity),
      [ALICE],
    );
    assert.deepEqual((await statusAs(OPS, fixture.bob)).queue, [], 'nothing queued on the first container');

    await openIn(fixture.alice, 'src/greeting.ts');
    await badgeBecomes(api, 'held-by-me');
    assert.equal(typeof (await vscode.commands.executeCommand<number>('lockstep.release')), 'number');
    await badgeBecomes(api, 'free');
    assert.equal((await statusAs(OPS, fixture.bob)).holder, null);
    const other = await statusAs(OPS, second.bob);
    assert.equal(other.holder?.identity, BOB, 'the second container was not touched');
    assert.deepEqual(
      other.queue.map(w => w.identity),
      [ALICE],
    );
  });
});
