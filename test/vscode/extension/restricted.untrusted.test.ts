import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LockstepAPI } from '../../../src/extension/api';
import { BOB, OPS, as, badgeBecomes, editAndRevert, fixture, lockstepApi, statusAs } from './backend';

// Run only by `runExtensionTests.mjs --untrusted 1`: workspace trust is on and alice's folder is not trusted.
// package.json declares limited support ("only shows the lock's status: it acquires nothing and installs no git
// hooks"); these tests hold the extension to that sentence.
const count = (api: LockstepAPI, pattern: RegExp) => api.logLines().filter(line => pattern.test(line)).length;
const REFUSED = /^\[warn\] Lockstep is read-only in an untrusted workspace: trust the folder to acquire, release or install hooks\.$/;

suite('an untrusted folder (restricted mode)', () => {
  let api: LockstepAPI;
  suiteSetup(async () => {
    api = await lockstepApi();
  });

  test('the folder is untrusted; Lockstep is active there, says it is read-only, and shows the lock', async () => {
    assert.equal(vscode.workspace.isTrusted, false);
    assert.equal(vscode.extensions.getExtension('lockstep.lockstep')!.packageJSON.capabilities.untrustedWorkspaces.supported, 'limited');
    assert.equal(count(api, /^\[info\] Lockstep activated in .* — restricted mode: read-only$/), 1);
    await badgeBecomes(api, 'free', 15_000);
  });

  test('the badge follows the lock as a coworker takes and releases it', async () => {
    const { grant } = await as(BOB, c => c.acquire());
    const held = await badgeBecomes(api, 'held-by-other');
    assert.match(held.tooltip, new RegExp(`${BOB}`));
    assert.equal(api.activeContainer()?.status?.holder?.grant, grant);
    await as(BOB, c => c.release());
    await badgeBecomes(api, 'free');
  });

  test('every command that would change the lock or the clone is refused with the read-only message', async () => {
    const hook = path.join(fixture.alice, '.git', 'hooks', 'pre-push');
    const kept = fs.readFileSync(hook);
    fs.rmSync(hook);
    try {
      for (const [command, ...args] of [
        ['lockstep.acquire'],
        ['lockstep.petition', 'let me'],
        ['lockstep.installHooks'],
        ['lockstep.leaseIds', BOB, 5],
        ['lockstep.assignBlock', BOB, 'a block'],
        ['lockstep.initialise'],
      ] as const) {
        const before = count(api, REFUSED);
        assert.equal(await vscode.commands.executeCommand(command, ...args), undefined, `${command} did nothing`);
        assert.equal(count(api, REFUSED), before + 1, `${command} said why`);
      }
      assert.equal(fs.existsSync(hook), false, 'no hook was installed');
      const status = await statusAs(OPS);
      assert.equal(status.holder, null);
      assert.deepEqual(status.queue, []);
      assert.deepEqual([status.ranges, status.blocks], [[], []]);
    } finally {
      fs.writeFileSync(hook, kept, { mode: 0o755 });
    }
  });

  test('editing a file of the container acquires nothing', async () => {
    const before = count(api, /on first edit|acquire on edit/);
    await editAndRevert('src/greeting.ts', '// untrusted\n');
    // Had the edit started an acquisition, bob would find the lock taken (or alice's attempt would fail and log).
    await as(BOB, c => c.acquire());
    await badgeBecomes(api, 'held-by-other');
    assert.equal(count(api, /on first edit|acquire on edit/), before);
    await as(BOB, c => c.release());
  });
});
