import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Finding } from '../../../src/core/diagnosis/diagnosis';
import type { LockstepAPI } from '../../../src/extension/api';
import {
  ALICE,
  BOB,
  OPS,
  as,
  badgeBecomes,
  closeEditorsAndNotifications,
  fixture,
  git,
  lockstepApi,
  resetToFree,
  statusAs,
} from './backend';
import { until } from './until';

// The commands that hand out work, leave the queue, install the guard and diagnose, run as the palette runs them
// (the arguments are the ones the lock page passes; a person is asked for them instead). Alice is the window.
suite('the work commands in VS Code', () => {
  let api: LockstepAPI;
  suiteSetup(async () => {
    api = await lockstepApi();
  });
  setup(async () => {
    await resetToFree(api);
  });
  teardown(closeEditorsAndNotifications);
  suiteTeardown(async () => {
    if (api) await resetToFree(api);
  });

  test('Withdraw Petition takes alice out of the queue; the badge goes back to Held by bob', async () => {
    await as(BOB, c => c.acquire());
    await badgeBecomes(api, 'held-by-other');
    assert.equal(await vscode.commands.executeCommand('lockstep.petition', 'after bob'), 1);
    await badgeBecomes(api, 'queued');
    assert.deepEqual(
      (await statusAs(OPS)).queue.map(p => [p.identity, p.note]),
      [[ALICE, 'after bob']],
    );
    assert.equal(await vscode.commands.executeCommand('lockstep.withdraw'), true);
    assert.deepEqual((await statusAs(OPS)).queue, [], "the store's queue is empty");
    await badgeBecomes(api, 'held-by-other');
  });

  test("Lease Identifiers gives bob a range under alice's grant; Insert Next Identifier types the lead's next one at every cursor", async () => {
    const grant = await vscode.commands.executeCommand<number>('lockstep.acquire');
    await badgeBecomes(api, 'held-by-me');
    await as(BOB, c => c.petition('waiting for ids')); // bob is on the lock page: no "a new teammate?" question
    const range = await vscode.commands.executeCommand<{ start: number; end: number }>('lockstep.leaseIds', BOB, 5);
    assert.equal(range.end - range.start, 4, 'five identifiers');
    assert.deepEqual(
      (await statusAs(OPS)).ranges.filter(r => r.to === BOB && r.grant === grant).map(r => [r.start, r.end]),
      [[range.start, range.end]],
    );

    // An untitled editor: the text is the command's, and nothing in the clone changes.
    const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument({ content: 'first: \nsecond: \n' }));
    editor.selections = [new vscode.Selection(0, 7, 0, 7), new vscode.Selection(1, 8, 1, 8)];
    const id = await vscode.commands.executeCommand<number>('lockstep.insertNextId');
    assert.equal(typeof id, 'number');
    assert.ok(id < range.start || id > range.end, "the lead mints from the pool, never from bob's range");
    assert.equal(editor.document.getText(), `first: ${id}\nsecond: ${id}\n`);
    const again = await vscode.commands.executeCommand<number>('lockstep.insertNextId');
    assert.notEqual(again, id, 'every identifier once');
    const { record } = await as(OPS, c => c.read());
    const minted = record.audit.filter(l => l.action === 'next-id' && l.who === ALICE).map(l => l.detail);
    assert.deepEqual(minted.slice(-2), [String(id), String(again)]);
  });

  test('Assign a Block of Work puts a block on the page for bob; Mark Block Done takes it off', async () => {
    await vscode.commands.executeCommand('lockstep.acquire');
    await badgeBecomes(api, 'held-by-me');
    await as(BOB, c => c.petition('waiting for work'));
    const text = `write the release notes ${Date.now()}`;
    assert.equal(await vscode.commands.executeCommand('lockstep.assignBlock', BOB, text), true);
    const block = (await statusAs(OPS)).blocks.find(b => b.text === text);
    assert.ok(block, 'the block is on the page');
    assert.equal(block.to, BOB);
    await until("alice's window to see the block", () => api.activeContainer()?.status?.blocks.some(b => b.id === block.id) ?? false);
    assert.deepEqual(await vscode.commands.executeCommand('lockstep.markBlockDone', block.id), { block: block.id, to: BOB });
    assert.equal(
      (await statusAs(OPS)).blocks.some(b => b.id === block.id),
      false,
      'done blocks leave the page',
    );
  });

  test("Install Git Hooks writes the pre-push guard that runs this extension's CLI", async () => {
    const hook = path.join(fixture.alice, '.git', 'hooks', 'pre-push');
    const kept = fs.readFileSync(hook);
    fs.rmSync(hook);
    try {
      const written = await vscode.commands.executeCommand<string>('lockstep.installHooks');
      assert.equal(fs.realpathSync(written), fs.realpathSync(hook));
      const script = fs.readFileSync(hook, 'utf8');
      assert.ok(script.startsWith('#!'), 'a script');
      assert.ok(fs.statSync(hook).mode & 0o100, 'executable');
      const cli = path.join(vscode.extensions.getExtension('lockstep.lockstep')!.extensionPath, 'dist', 'cli.js');
      assert.ok(script.includes(cli), `it runs ${cli}:\n${script}`);
      // The guard it wrote refuses a push to main without the lock, as the one `lockstep hooks install` wrote did.
      fs.writeFileSync(path.join(fixture.alice, 'unguarded.txt'), 'no lock\n');
      await git(fixture.alice, 'add', 'unguarded.txt');
      await git(fixture.alice, 'commit', '--quiet', '-m', 'Without the lock');
      await assert.rejects(git(fixture.alice, 'push', '--quiet', 'origin', 'main'), /lock|grant/i);
    } finally {
      await git(fixture.alice, 'reset', '--quiet', '--hard', 'origin/main').catch(() => undefined);
      if (!fs.existsSync(hook)) fs.writeFileSync(hook, kept, { mode: 0o755 });
    }
  });

  test('Diagnose opens the findings of lockstep doctor as a rendered Markdown preview, not an unsaved buffer', async () => {
    const findings = await vscode.commands.executeCommand<Finding[]>('lockstep.diagnose');
    assert.ok(findings.length > 0);
    const tabs = () => vscode.window.tabGroups.all.flatMap(g => g.tabs);
    await until(
      'the Markdown preview tab',
      () => tabs().some(t => t.input instanceof vscode.TabInputWebview && /markdown\.preview/.test(t.input.viewType)),
      10_000,
    );
    const preview = tabs().find(t => t.input instanceof vscode.TabInputWebview && /markdown\.preview/.test(t.input.viewType))!;
    assert.match(preview.label, new RegExp(`${path.basename(fixture.alice).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.md`));
    assert.equal(
      tabs().some(t => t.input instanceof vscode.TabInputText && t.input.uri.scheme === 'untitled'),
      false,
      'no untitled buffer asks to be saved',
    );
    assert.equal(
      vscode.workspace.textDocuments.some(d => d.isDirty && d.languageId === 'markdown'),
      false,
    );
    // The page is a file of the extension's storage, which the log names.
    const written = api
      .logLines()
      .map(l => / findings for .+ in (\/.+\.md)$/.exec(l)?.[1])
      .filter(Boolean)
      .at(-1)!;
    const text = fs.readFileSync(written, 'utf8');
    assert.match(text, new RegExp(`^# Lockstep: Diagnose — ${path.basename(fixture.alice)}\n`));
    for (const finding of findings) assert.ok(text.includes(`**${finding.check}**: ${finding.found}`), `the page lists ${finding.check}`);
    assert.deepEqual(
      findings.filter(f => f.level === 'error').map(f => f.check),
      [],
      'a working container has no error',
    );
  });
});
