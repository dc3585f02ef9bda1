import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LockLeaseLostError } from '../../../src/core/errors';
import type { LockstepAPI } from '../../../src/extension/api';
import {
  ALICE,
  BOB,
  OPS,
  as,
  badgeBecomes,
  cli,
  commitInAlice,
  dismissNotifications,
  fixture,
  git,
  lapsingGrantAs,
  lockstepApi,
  resetToFree,
  statusAs,
} from './backend';
import { until } from './until';

const count = (api: LockstepAPI, pattern: RegExp) => api.logLines().filter(line => pattern.test(line)).length;

async function openGreeting(): Promise<vscode.TextEditor> {
  const document = await vscode.workspace.openTextDocument(path.join(fixture.alice, 'src', 'greeting.ts'));
  return vscode.window.showTextDocument(document);
}

async function edit(editor: vscode.TextEditor, text: string): Promise<void> {
  assert.ok(await editor.edit(e => e.insert(new vscode.Position(0, 0), text)), 'the edit was applied');
}

suite('editing in the container', () => {
  let api: LockstepAPI;
  suiteSetup(async () => {
    api = await lockstepApi();
  });
  setup(async () => {
    await resetToFree(api);
  });
  teardown(async () => {
    // Unsaved edits never reach the clone (git stays clean, so the reset can release).
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await dismissNotifications();
  });

  test('the first edit of a file acquires the lock when it is free', async () => {
    const editor = await openGreeting();
    await edit(editor, '// first edit\n');
    const badge = await badgeBecomes(api, 'held-by-me');
    const grant = api.activeContainer()!.status!.holder!.grant;
    assert.match(badge.text, new RegExp(`#${grant} `));
    // The badge may turn on the store's change event before the acquisition's own log line is written.
    const acquiredOnEdit = new RegExp(`acquired grant #${grant} on first edit`);
    await until('the first-edit acquisition to be logged', () => count(api, acquiredOnEdit) > 0);
    assert.equal(count(api, acquiredOnEdit), 1);
    // Further edits do not acquire again.
    await edit(editor, '// second edit\n');
    assert.equal((await statusAs(OPS)).grant, grant);
  });

  test('edits while bob holds it warn once per session, not per keystroke, and acquire nothing', async () => {
    const { grant } = await as(BOB, c => c.acquire());
    await badgeBecomes(api, 'held-by-other');
    const warned = new RegExp(`edited while ${BOB} holds the lock \\(grant #\\d+\\); warned`);
    const before = count(api, warned);
    const editor = await openGreeting();
    // The extension's listener was registered before this one, so once this one has seen every edit, so has it.
    let seen = 0;
    const listener = vscode.workspace.onDidChangeTextDocument(e => {
      if (e.document === editor.document && e.contentChanges.length > 0) seen++;
    });
    try {
      for (const text of ['a', 'b', 'c', 'd']) await edit(editor, text);
      await until('the four edits to be delivered', () => seen >= 4);
    } finally {
      listener.dispose();
    }
    assert.equal(count(api, warned) - before, 1, 'one warning for four edits');
    assert.equal(api.badge().state, 'held-by-other');
    assert.equal((await statusAs(OPS)).holder?.grant, grant, 'bob still holds it');
  });
});

suite('holding the lock', () => {
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

  test('heartbeats renew the lease on heartbeatSeconds (5 s in the fixture)', async () => {
    const grant = await vscode.commands.executeCommand<number>('lockstep.acquire');
    await badgeBecomes(api, 'held-by-me');
    const first = (await statusAs(OPS)).holder!;
    assert.equal(first.grant, grant);
    const started = Date.now();
    await until(
      'a heartbeat to move expiresAt forward',
      async () => ((await statusAs(OPS)).holder?.expiresAt ?? 0) > first.expiresAt,
      15_000,
    );
    const renewed = (await statusAs(OPS)).holder!;
    console.log(`      heartbeat moved expiresAt forward by ${renewed.expiresAt - first.expiresAt} ms after ${Date.now() - started} ms`);
    assert.equal(renewed.grant, grant, 'the same grant');
    await until('the model to show the renewed expiry', () => (api.activeContainer()?.status?.holder?.expiresAt ?? 0) >= renewed.expiresAt);
  });

  test('a failed heartbeat turns the badge Offline; when the store returns the same lease goes on', async () => {
    const grant = await vscode.commands.executeCommand<number>('lockstep.acquire');
    await badgeBecomes(api, 'held-by-me');
    const moved = `${fixture.store}.away`;
    fs.renameSync(fixture.store, moved);
    fs.writeFileSync(fixture.store, 'not a folder\n');
    try {
      // A read may notice first (a change event from the acquisition still in flight); the heartbeat (every 5 s in
      // the fixture) must notice too, and retry rather than give the lease up.
      await badgeBecomes(api, 'offline', 10_000);
      await until('the heartbeat to fail', () => count(api, /heartbeat failed, retrying in \d+ s/) >= 1, 10_000);
      assert.equal(api.badge().state, 'offline');
    } finally {
      fs.rmSync(fixture.store);
      fs.renameSync(moved, fixture.store);
    }
    await badgeBecomes(api, 'held-by-me', 10_000);
    assert.equal(api.activeContainer()!.status!.holder!.grant, grant, 'the same grant: a retry, not a new acquisition');
  });

  test('a store unreachable past the lease\'s expiry turns the badge "Lease lost (offline)"; the lease is not revived when it returns', async () => {
    // Alice, at her terminal, takes the lock with four seconds left (the shortest lease, dated back: lapsingGrantAs);
    // her window adopts it, then loses the store before its first heartbeat (due at half the time left).
    const { grant, expiresAt } = await lapsingGrantAs(ALICE, fixture.alice, 4_000);
    await vscode.commands.executeCommand('lockstep.refresh');
    assert.equal(api.badge().state, 'held-by-me');
    const moved = `${fixture.store}.away`;
    fs.renameSync(fixture.store, moved);
    fs.writeFileSync(fixture.store, 'not a folder\n');
    try {
      const badge = await badgeBecomes(api, 'lease-lost-offline', 12_000);
      assert.ok(Date.now() >= expiresAt, 'not before the expiry');
      assert.equal(badge.text, `$(error) Lease lost (offline) #${grant}`);
      assert.equal(badge.severity, 'error');
      await vscode.commands.executeCommand('lockstep.refresh'); // a retry that fails again
      assert.equal(api.badge().state, 'lease-lost-offline', 'it stays lost while the store is away');
    } finally {
      fs.rmSync(fixture.store);
      fs.renameSync(moved, fixture.store);
    }
    // The badge's own "click to retry now": the read back-off after several failed reads may be 30 s long.
    await vscode.commands.executeCommand('lockstep.refresh');
    await badgeBecomes(api, 'stale', 15_000);
    const after = (await statusAs(OPS)).holder!;
    assert.equal(after.grant, grant);
    assert.equal(after.expiresAt, expiresAt, 'nothing renewed the lost lease when the store returned');
  });

  test('a lost lease turns the badge Stale and says so', async () => {
    const model = api.activeContainer()!;
    let lost: LockLeaseLostError | undefined;
    const subscription = model.onDidLoseLease(error => {
      lost = error;
    });
    try {
      // Alice, at her terminal, takes the lock with one second left (lapsingGrantAs); her window adopts it and beats too late.
      const { grant } = await lapsingGrantAs(ALICE, fixture.alice);
      await vscode.commands.executeCommand('lockstep.refresh');
      assert.equal(api.badge().state, 'held-by-me', "the window adopted the terminal's lease");
      await until('the heartbeat to find the lease lost', () => lost !== undefined, 8_000);
      assert.match(lost!.message, new RegExp(`grant #${grant}\\) expired`));
      const badge = await badgeBecomes(api, 'stale');
      assert.equal(badge.text, `$(error) Stale grant #${grant} — push blocked`);
      assert.equal(count(api, new RegExp(`lease lost — Your lease \\(grant #${grant}\\) expired`)), 1);
      // A lost lease is never revived: the next acquisition is a new grant.
      const taken = await as(BOB, c => c.acquire());
      assert.equal(taken.grant, grant + 1);
      await until('alice to see the new grant', () => api.activeContainer()?.status?.grant === grant + 1);
      assert.equal(api.badge().state, 'stale');
    } finally {
      subscription.dispose();
    }
  });

  test('a lease found lost by a read, before any heartbeat (a window that slept), is reported once too', async () => {
    const model = api.activeContainer()!;
    const lost: LockLeaseLostError[] = [];
    const subscription = model.onDidLoseLease(error => {
      lost.push(error);
    });
    try {
      const { grant, expiresAt } = await lapsingGrantAs(ALICE, fixture.alice);
      // Adopted late, so that its first heartbeat (1 s after adoption at the earliest) comes after the expiry: the
      // re-read the window schedules for the expiry instant notices first.
      await until("alice's lease to be nearly over", () => Date.now() >= expiresAt - 400, 2_000);
      await vscode.commands.executeCommand('lockstep.refresh');
      assert.equal(api.badge().state, 'held-by-me');
      await badgeBecomes(api, 'stale', 5_000);
      await until('the loss to be reported', () => lost.length > 0, 5_000);
      assert.match(lost[0].message, new RegExp(`grant #${grant}\\) expired`));
      // The heartbeat was due 1 s after adoption (600 ms past the expiry): it must not report the loss again.
      await until('the heartbeat to have come and gone', () => Date.now() >= expiresAt + 800, 3_000);
      assert.equal(lost.length, 1);
      assert.equal(count(api, new RegExp(`lease lost — Your lease \\(grant #${grant}\\) expired`)), 1);
    } finally {
      subscription.dispose();
    }
  });

  test('release is refused while a commit is unpushed, and works after the push', async () => {
    const grant = await vscode.commands.executeCommand<number>('lockstep.acquire');
    await badgeBecomes(api, 'held-by-me');
    await commitInAlice('notes.txt', 'work in progress\n');
    const before = count(api, /Release refused/);
    // The refusal waits for an answer ("Push and Release"); it is dismissed here, as a person might.
    const released = vscode.commands.executeCommand('lockstep.release');
    await until('the release to be refused', () => count(api, /Release refused/) > before);
    assert.match(
      api
        .logLines()
        .filter(l => /Release refused/.test(l))
        .at(-1)!,
      /1 commit not on origin\/main/,
    );
    await dismissNotifications();
    assert.equal(await released, undefined);
    const held = await statusAs(OPS);
    assert.equal(held.holder?.identity, ALICE, 'the lock is still held');
    assert.equal(held.holder?.grant, grant);
    assert.equal(api.badge().state, 'held-by-me');

    // The push passes the pre-push guard (alice holds the live grant); then release is valid.
    await git(fixture.alice, 'push', '--quiet', 'origin', 'main');
    assert.equal(await vscode.commands.executeCommand('lockstep.release'), grant);
    await badgeBecomes(api, 'free');
    assert.equal((await statusAs(OPS)).holder, null);
  });

  test("Push and Release pushes the protected branch through VS Code's git (where it runs), then releases", async () => {
    const grant = await vscode.commands.executeCommand<number>('lockstep.acquire');
    await commitInAlice('more-notes.txt', 'more work\n');
    const head = (await git(fixture.alice, 'rev-parse', 'HEAD')).trim();
    assert.equal(await vscode.commands.executeCommand('lockstep.pushAndRelease'), grant);
    assert.equal((await git(fixture.alice, 'ls-remote', 'origin', 'refs/heads/main')).split('\t')[0], head, 'the remote has the commit');
    // The built-in git extension sends it (the user's credentials and askpass) when this host has it enabled.
    const gitExtension = vscode.extensions.getExtension<{ enabled: boolean }>('vscode.git');
    const expected =
      gitExtension?.isActive && gitExtension.exports.enabled
        ? /Pushed main to origin through VS Code's git\.$/
        : /Pushing main with git \(VS Code's git extension is not available/;
    assert.ok(
      api.logLines().some(line => expected.test(line)),
      `the log says who pushed: ${api.logLines().slice(-4).join(' | ')}`,
    );
    await badgeBecomes(api, 'free');
  });
});

suite('seeing changes made elsewhere', () => {
  let api: LockstepAPI;
  suiteSetup(async () => {
    api = await lockstepApi();
  });
  setup(async () => {
    await resetToFree(api);
  });
  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test("a petition made with the CLI in bob's clone shows in alice's window without a reload", async () => {
    // The operator holds it, so alice's window has no heartbeat that would re-read the record anyway.
    await as(OPS, c => c.acquire());
    await badgeBecomes(api, 'held-by-other');
    const model = api.activeContainer()!;
    let arrivedAt: number | undefined;
    const subscription = model.onDidChange(m => {
      if (arrivedAt === undefined && m.status?.queue.some(p => p.identity === BOB)) arrivedAt = Date.now();
    });
    try {
      const petitioned = await cli(fixture.bob, ['petition', '--note', 'live update']);
      assert.equal(petitioned.code, 0, JSON.stringify(petitioned.json));
      // Well inside the 30 s safety poll: the file driver's watch delivered it.
      await until("bob's petition to reach alice's window", () => arrivedAt !== undefined, 10_000);
      const entry = model.status!.queue.find(p => p.identity === BOB)!;
      assert.equal(entry.note, 'live update');
      console.log(`      live update: bob's petition reached alice's window ${arrivedAt! - entry.at} ms after the store recorded it`);
      assert.match(api.badge().tooltip, new RegExp(`Queue: 1\\. ${BOB}`));
    } finally {
      subscription.dispose();
    }
  });

  test('Show Lock Page opens one webview panel, and a second run reveals it', async () => {
    const lockPages = () =>
      vscode.window.tabGroups.all
        .flatMap(g => g.tabs)
        .filter(t => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith('lockstep.lockPage'));
    await vscode.commands.executeCommand('lockstep.showLockPage');
    await until('the lock page tab', () => lockPages().length === 1);
    assert.equal(lockPages()[0].label, 'Lockstep: Lock Page');
    await vscode.commands.executeCommand('lockstep.showLockPage');
    assert.equal(lockPages().length, 1, 'one panel');
    assert.ok(lockPages()[0].isActive);
    await vscode.window.tabGroups.close(lockPages());
  });
});
