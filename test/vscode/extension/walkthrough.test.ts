import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { readSetupFacts } from '../../../src/extension/setupProgress';
import { EXTENSION_ID, cli, fixture, git, lockstepApi } from './backend';

suite('the first-day walkthrough', () => {
  suiteSetup(async () => {
    await lockstepApi();
  });

  test('package.json contributes it, with a self-completing event for every step and its media shipped', () => {
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as {
      contributes: { walkthroughs: { steps: { id: string; completionEvents: string[]; media: { markdown: string } }[] }[] };
    };
    const steps = manifest.contributes.walkthroughs[0]!.steps;
    assert.deepEqual(
      steps.map(s => s.id),
      ['initialise', 'commit', 'hooks', 'serverGuard', 'acquire', 'release'],
    );
    for (const step of steps) {
      assert.ok(step.completionEvents.length > 0, `${step.id} completes by itself`);
      const markdown = path.join(vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath, step.media.markdown);
      assert.ok(fs.existsSync(markdown), `${step.media.markdown} exists`);
    }
  });

  test('the setup facts follow the clone and the shared remote: committed, hooks, then the server guard once installed', async () => {
    const remote = process.env.LOCKSTEP_TEST_REMOTE!;
    const before = await readSetupFacts(fixture.alice, 'origin');
    assert.deepEqual(before, { committed: true, hooks: true, serverGuard: false });
    // In the bare remote, as its administrator would.
    const installed = await cli(remote, ['hooks', 'install', '--server']);
    assert.equal(installed.code, 0, JSON.stringify(installed.json));
    try {
      assert.deepEqual(await readSetupFacts(fixture.alice, 'origin'), { committed: true, hooks: true, serverGuard: true });
      // A clone without the hook (bob's, with it removed) says so.
      const hook = path.join(fixture.bob, '.git', 'hooks', 'pre-push');
      const saved = fs.readFileSync(hook);
      fs.rmSync(hook);
      try {
        assert.equal((await readSetupFacts(fixture.bob, 'origin')).hooks, false);
      } finally {
        fs.writeFileSync(hook, saved, { mode: 0o755 });
      }
    } finally {
      // The other suites push to this remote without proofs.
      for (const f of ['pre-receive', 'lockstep-server.json']) fs.rmSync(path.join(remote, 'hooks', f), { force: true });
      await git(remote, 'config', '--unset-all', 'receive.advertisePushOptions').catch(() => '');
    }
  });
});
