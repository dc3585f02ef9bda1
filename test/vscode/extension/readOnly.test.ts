import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LockstepAPI } from '../../../src/extension/api';
import { ALICE, BOB, as, badgeBecomes, dismissNotifications, fixture, lockstepApi, resetToFree } from './backend';
import { until } from './until';

const count = (api: LockstepAPI, pattern: RegExp) => api.logLines().filter(line => pattern.test(line)).length;
const settings = () => vscode.workspace.getConfiguration('lockstep');

async function open(file: string): Promise<vscode.TextEditor> {
  return vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file));
}

/** Types like a person at the keyboard (the `type` command honours a read-only editor; an API edit would not). */
async function typeInto(editor: vscode.TextEditor, text: string): Promise<void> {
  await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, preserveFocus: false });
  editor.selection = new vscode.Selection(0, 0, 0, 0);
  await vscode.commands.executeCommand('type', { text });
}

/** alice's src/greeting.ts open in an editor, then bob acquires: the editor is made read-only. */
async function greetingOpenWhileBobHolds(api: LockstepAPI): Promise<{ editor: vscode.TextEditor; original: string }> {
  const editor = await open(path.join(fixture.alice, 'src', 'greeting.ts'));
  const original = editor.document.getText();
  await as(BOB, c => c.acquire());
  await badgeBecomes(api, 'held-by-other');
  await until(
    'the editor to be made read-only',
    () => count(api, /src\/greeting\.ts is read-only while bob@example\.com has the lock/) >= 1,
  );
  return { editor, original };
}

suite('read-only while another holds the lock (lockstep.whileLockedByOthers: readOnly)', () => {
  let api: LockstepAPI;
  suiteSetup(async () => {
    api = await lockstepApi();
    // User settings, not the folder's .vscode/settings.json: nothing tracked by git changes.
    await settings().update('whileLockedByOthers', 'readOnly', vscode.ConfigurationTarget.Global);
    await settings().update('readOnlyExclude', ['notes/**'], vscode.ConfigurationTarget.Global);
  });
  suiteTeardown(async () => {
    await settings().update('whileLockedByOthers', undefined, vscode.ConfigurationTarget.Global);
    await settings().update('readOnlyExclude', undefined, vscode.ConfigurationTarget.Global);
  });
  setup(async () => {
    await resetToFree(api);
  });
  teardown(async () => {
    for (let i = 0; i < 4 && vscode.window.activeTextEditor; i++)
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await dismissNotifications();
  });

  test('typing while bob holds the lock changes nothing; once the lock passes to alice, typing works without reopening', async () => {
    const { editor, original } = await greetingOpenWhileBobHolds(api);
    await typeInto(editor, 'typed while bob holds it ');
    assert.equal(editor.document.getText(), original, 'a read-only editor takes no typing');
    assert.equal(editor.document.isDirty, false);

    // Alice petitions; bob releases: it is alice's turn, and the same editor takes her typing, which acquires.
    await as(ALICE, c => c.petition(), fixture.alice);
    await as(BOB, c => c.release());
    await badgeBecomes(api, 'your-turn');
    await until('the editor to be writable again', () => count(api, /src\/greeting\.ts is writable again/) >= 1);
    await typeInto(editor, '// alice ');
    assert.equal(editor.document.getText(), `// alice ${original}`);
    await badgeBecomes(api, 'held-by-me');
  });

  test('VS Code\'s own "set writeable" is a way round the switch: the first edit then says who holds the lock and that the fence is at the push, once', async () => {
    const { editor, original } = await greetingOpenWhileBobHolds(api);
    const told = /src\/greeting\.ts was made writable and edited while bob@example\.com has the lock/;
    const before = count(api, told);
    // What the banner's "set writeable" does: VS Code's session switch back.
    await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, preserveFocus: false });
    await vscode.commands.executeCommand('workbench.action.files.resetActiveEditorReadonlyInSession');
    await typeInto(editor, 'x');
    await until('the override to be noticed', () => count(api, told) === before + 1);
    await typeInto(editor, 'y');
    assert.equal(count(api, told), before + 1, 'told once per file and holder');
    assert.notEqual(editor.document.getText(), original, 'the edit went in: the switch is advisory');
    assert.equal(api.badge().state, 'held-by-other', 'and nothing was acquired');
  });

  test('untitled files, files outside the container and readOnlyExclude stay writable while bob holds it', async () => {
    fs.mkdirSync(path.join(fixture.alice, 'notes'), { recursive: true });
    const note = path.join(fixture.alice, 'notes', 'todo.md');
    fs.writeFileSync(note, 'notes\n');
    const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-outside-')), 'scratch.txt');
    fs.writeFileSync(outside, 'scratch\n');
    await as(BOB, c => c.acquire());
    await badgeBecomes(api, 'held-by-other');
    const readme = await open(path.join(fixture.alice, 'README.md'));
    await until('README.md to be made read-only', () => count(api, /README\.md is read-only while/) >= 1);
    await typeInto(readme, 'x');
    assert.equal(readme.document.isDirty, false, 'a file of the container is read-only');

    for (const editor of [
      await open(note),
      await open(outside),
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument({ content: 'draft\n' })),
    ]) {
      await typeInto(editor, 'typed ');
      assert.match(editor.document.getText(), /^typed /, `${editor.document.uri.toString()} stays writable`);
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    }
    fs.rmSync(path.join(fixture.alice, 'notes'), { recursive: true });
  });
});

suite('warnings before it is too late', () => {
  let api: LockstepAPI;
  suiteSetup(async () => {
    api = await lockstepApi();
  });
  setup(async () => {
    await resetToFree(api);
  });
  teardown(async () => {
    await dismissNotifications();
  });

  test("heartbeats failing within 15 minutes of the lease's end (a 60 s lease here) warns the holder once", async () => {
    const grant = await vscode.commands.executeCommand<number>('lockstep.acquire');
    await badgeBecomes(api, 'held-by-me');
    const warned = new RegExp(`lease-ending warning for grant #${grant}`);
    assert.equal(count(api, warned), 0, 'no warning while heartbeats work');
    const moved = `${fixture.store}.away`;
    fs.renameSync(fixture.store, moved);
    fs.writeFileSync(fixture.store, 'not a folder\n');
    try {
      await badgeBecomes(api, 'offline', 10_000);
      await until('the lease-ending warning', () => count(api, warned) >= 1, 10_000);
    } finally {
      fs.rmSync(fixture.store);
      fs.renameSync(moved, fixture.store);
    }
    await badgeBecomes(api, 'held-by-me', 10_000);
    assert.equal(count(api, warned), 1, 'one warning per grant');
  });
});
