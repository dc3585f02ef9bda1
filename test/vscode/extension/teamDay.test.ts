import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LockstepAPI } from '../../../src/extension/api';
import { ALICE, BOB, OPS, as, badgeBecomes, dismissNotifications, fixture, lapsingGrantAs, lockstepApi, resetToFree } from './backend';
import { until } from './until';

// Issue 13 in the real extension host: the lapsed lease (badge and "Your turn"), the operator's click on
// HOLDER SILENT, and Initialise's questions.
suite("a team's day in VS Code", () => {
  let api: LockstepAPI;

  suiteSetup(async () => {
    api = await lockstepApi();
  });
  setup(async () => {
    await resetToFree(api);
  });
  suiteTeardown(async () => {
    if (api) await resetToFree(api);
  });

  test('a lapsed lease: Stale until alice petitions, then Queued with the lapse in the tooltip, then "Your turn" fires', async () => {
    // Alice's terminal grant runs out a second from now (the shortest lease, dated back: lapsingGrantAs).
    const mine = await lapsingGrantAs(ALICE, fixture.alice);
    const { grant } = await as(BOB, async c => {
      await until("alice's lease to run out", async () => (await c.status()).canAcquire, 8_000);
      return c.acquire();
    });
    // Stale from its own expiry first; then the page shows bob's grant.
    await until(
      `alice to see bob's grant #${grant}`,
      () => api.badge().state === 'stale' && api.activeContainer()?.status?.grant === grant,
      10_000,
    );
    const stale = api.badge();
    assert.match(stale.tooltip, new RegExp(`Lapsed: your lease #${mine.grant} has ended: grant #${grant} was issued to ${BOB}`));
    assert.equal(stale.command, 'lockstep.petition', 'held by bob: the click petitions');
    await vscode.commands.executeCommand('lockstep.petition', 'after my lapse');
    const queued = await badgeBecomes(api, 'queued');
    assert.equal(queued.text, '$(watch) Queued #1 · $(warning) caution', 'bob took over a silent holder: the caution mark');
    assert.match(queued.tooltip, /Lapsed: your lease #\d+ has ended/);
    const model = api.activeContainer()!;
    let told = 0;
    const subscription = model.onDidBecomeTurn(() => {
      told++;
    });
    try {
      await as(BOB, c => c.release());
      const turn = await badgeBecomes(api, 'your-turn');
      assert.equal(turn.command, 'lockstep.acquire');
      assert.equal(told, 1, 'the "Your turn" notification fires for a lapsed clone too');
      const got = await vscode.commands.executeCommand<number>('lockstep.acquire');
      assert.equal(got, grant + 1);
      await badgeBecomes(api, 'held-by-me');
    } finally {
      subscription.dispose();
      await dismissNotifications();
    }
  });

  test("the operator's click on HOLDER SILENT opens the clear flow (reason prompt) and never acquires", async () => {
    // User settings, not the workspace's .vscode/settings.json: an edit inside the folder would acquire on first edit.
    const config = vscode.workspace.getConfiguration('lockstep', vscode.workspace.workspaceFolders![0].uri);
    await config.update('identity', OPS, vscode.ConfigurationTarget.Global);
    let grant: number;
    try {
      // Bob's grant runs out a second from now (the shortest lease, dated back: lapsingGrantAs).
      grant = (await lapsingGrantAs(BOB)).grant;
      await until(
        "the operator's badge: HOLDER SILENT, click clears",
        () => api.badge().state === 'holder-silent' && api.badge().command === 'lockstep.clear',
        10_000,
      ).catch(error => {
        throw new Error(`${(error as Error).message}; badge ${JSON.stringify(api.badge())}`);
      });
      let settled = false;
      const clicked = Promise.resolve(vscode.commands.executeCommand<number | undefined>(api.badge().command!)).finally(() => {
        settled = true;
      });
      // The reason prompt is open; cancel it: nothing happens, and above all no acquisition.
      await until(
        'the reason prompt to be dismissed',
        async () => {
          await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
          return settled;
        },
        8_000,
      );
      assert.equal(await clicked, undefined);
    } finally {
      await config.update('identity', undefined, vscode.ConfigurationTarget.Global);
    }
    // Read from alice's clone: bob's own clone holds bob's (lapsed) session, which would make it stale there.
    const after = await as(OPS, c => c.status(), fixture.alice);
    assert.equal(after.state, 'holder-silent');
    assert.equal(after.holder?.identity, BOB);
    assert.equal(after.grant, grant);
    // Alice is no operator: with nobody queued, her click on the same HOLDER SILENT acquires.
    await until(
      "alice's badge again",
      () => api.badge().state === 'holder-silent' && api.badge().command === 'lockstep.acquire',
      10_000,
    ).catch(error => {
      throw new Error(`${(error as Error).message}; badge ${JSON.stringify(api.badge())}`);
    });
  });

  test('Initialise Container asks for the driver, the operators and the protected branch (a repository whose remote has no container yet)', async () => {
    const file = path.join(fixture.alice, '.lockstep.json');
    const kept = fs.readFileSync(file);
    const git = (...args: string[]) => execFileSync('git', args, { cwd: fixture.alice, encoding: 'utf8' }).trim();
    const origin = git('remote', 'get-url', 'origin');
    // A shared remote nobody has pushed to: the state in which a team makes a repository a container. (The
    // fixture's own remote has .lockstep.json on main, where init rightly tells the clone to pull instead.)
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-fresh-remote-'));
    execFileSync('git', ['init', '--quiet', '--bare', fresh]);
    fs.rmSync(file);
    git('remote', 'set-url', 'origin', fresh);
    try {
      await badgeBecomes(api, 'not-initialised');
      let done = false;
      const asked = Promise.resolve(vscode.commands.executeCommand<string | undefined>('lockstep.initialise')).finally(() => {
        done = true;
      });
      // Accept each question's first choice or pre-filled answer: file, alice, main.
      await until(
        'Initialise to finish its three questions',
        async () => {
          await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
          // Its closing message ("commit .lockstep.json …") waits for an answer: dismiss it once the file is there.
          if (fs.existsSync(file)) await dismissNotifications();
          return done;
        },
        15_000,
      );
      await dismissNotifications();
      const container = await asked;
      assert.match(container ?? '', /^[0-9a-f-]{36}$/);
      const written = JSON.parse(fs.readFileSync(file, 'utf8'));
      assert.equal(written.container, container);
      assert.equal(written.driver, 'file');
      assert.deepEqual(written.operators, [ALICE]);
      assert.deepEqual(written.protectedBranches, ['main']);
      await badgeBecomes(api, 'free', 15_000);
    } finally {
      git('remote', 'set-url', 'origin', origin);
      fs.writeFileSync(file, kept);
      fs.rmSync(fresh, { recursive: true, force: true });
    }
    await badgeBecomes(api, 'free', 15_000);
    assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).container, JSON.parse(kept.toString('utf8')).container);
  });

  test('Initialise Container in a clone whose remote already has .lockstep.json tells it to pull before asking anything, and writes nothing', async () => {
    const REFUSED = /origin\/main already has a committed \.lockstep\.json/;
    const file = path.join(fixture.alice, '.lockstep.json');
    const kept = fs.readFileSync(file);
    fs.rmSync(file);
    try {
      await badgeBecomes(api, 'not-initialised');
      const asked = Promise.resolve(vscode.commands.executeCommand<string | undefined>('lockstep.initialise'));
      let done = false;
      void asked.finally(() => {
        done = true;
      });
      // It refuses before asking anything: no question is answered here, only its error message dismissed.
      await until(
        'Initialise to refuse',
        async () => {
          if (api.logLines().some(line => REFUSED.test(line))) await dismissNotifications();
          return done;
        },
        15_000,
      );
      assert.equal(await asked, undefined, 'no container was made');
      assert.equal(fs.existsSync(file), false, 'no .lockstep.json was written');
      assert.ok(
        api.logLines().some(line => /Pull it \(`git pull`\) instead of running lockstep init/.test(line)),
        'the refusal says to pull',
      );
    } finally {
      fs.writeFileSync(file, kept);
    }
    await badgeBecomes(api, 'free', 15_000);
  });
});
