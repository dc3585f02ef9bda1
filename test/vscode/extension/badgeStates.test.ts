import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LockstepAPI } from '../../../src/extension/api';
import { ALICE, BOB, OPS, as, badgeBecomes, cli, fixture, lapsingGrantAs, lockstepApi, resetToFree } from './backend';
import { until } from './until';

// Every badge state, driven from the backend: bob and the operator act through core or the CLI on the shared
// file store; the extension (alice) only watches, except where alice's own action is the point.
suite('badge states, driven from the backend', () => {
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

  test('Free: unlock icon, "Free", click acquires', async () => {
    const badge = await badgeBecomes(api, 'free');
    assert.equal(badge.text, '$(unlock) Free');
    assert.equal(badge.severity, 'normal');
    assert.equal(badge.command, 'lockstep.acquire');
    assert.match(badge.tooltip, /Free \(last grant #\d+\)/);
  });

  test('Held by me: "#grant · time left", and the time left counts down', async () => {
    const grant = await vscode.commands.executeCommand<number>('lockstep.acquire');
    assert.equal(typeof grant, 'number');
    const badge = await badgeBecomes(api, 'held-by-me');
    assert.match(badge.text, new RegExp(`^\\$\\(pass-filled\\) Held by me #${grant} · (\\d+m \\d\\ds|\\d+s)$`));
    assert.equal(badge.severity, 'mine', 'its own colour: at a glance unlike Held by NAME');
    assert.equal(badge.command, 'lockstep.holderMenu');
    assert.match(badge.tooltip, new RegExp(`Holder: ${ALICE}`));
    const first = badge.text;
    await until('the time left to count down', () => api.statusText() !== first, 2_500);
    assert.equal(api.badge().state, 'held-by-me');
  });

  test('Held by bob: bob acquires through core, alice sees "Held by bob"; click petitions', async () => {
    const { grant } = await as(BOB, c => c.acquire());
    const badge = await badgeBecomes(api, 'held-by-other');
    assert.equal(badge.text, '$(lock) Held by bob');
    assert.equal(badge.command, 'lockstep.petition');
    assert.match(badge.tooltip, new RegExp(`Holder: ${BOB}.*Grant: #${grant}`, 's'));
  });

  test('Queued #2: bob holds, the operator petitions first, alice petitions second', async () => {
    await as(BOB, c => c.acquire());
    await as(OPS, c => c.petition('first'));
    const position = await vscode.commands.executeCommand<number>('lockstep.petition', 'second');
    assert.equal(position, 2);
    const badge = await badgeBecomes(api, 'queued');
    assert.equal(badge.text, '$(watch) Queued #2');
    assert.match(badge.tooltip, new RegExp(`Queue: 1\\. ${OPS}, 2\\. ${ALICE}`));
  });

  test('Your turn: bob releases with alice at the head of the queue; warning colour, click acquires', async () => {
    await as(BOB, c => c.acquire());
    await vscode.commands.executeCommand('lockstep.petition', 'after bob');
    await badgeBecomes(api, 'queued');
    const model = api.activeContainer()!;
    let told = 0;
    const subscription = model.onDidBecomeTurn(() => {
      told++;
    });
    try {
      await as(BOB, c => c.release());
      const badge = await badgeBecomes(api, 'your-turn');
      assert.match(badge.text, /^\$\(bell\) Your turn · (\d+s|\d+m \d\ds)$/);
      assert.equal(badge.severity, 'warning');
      assert.equal(badge.command, 'lockstep.acquire');
      assert.equal(told, 1, 'the "Your turn" notification fires once');
      // Nobody else may take it during alice's window.
      const refused = await cli(fixture.bob, ['acquire']);
      assert.equal(refused.code, 3, JSON.stringify(refused.json));
      const grant = await vscode.commands.executeCommand<number>('lockstep.acquire');
      assert.match((await badgeBecomes(api, 'held-by-me')).text, new RegExp(`#${grant} `));
    } finally {
      subscription.dispose();
    }
  });

  test("HOLDER SILENT: bob's lease runs out and he goes quiet; warning colour, shown without a store change", async () => {
    // The shortest lease (60 s), dated so that it runs out a second from now (lapsingGrantAs).
    await lapsingGrantAs(BOB);
    // The record does not change when bob's lease runs out: the badge must turn by itself.
    const badge = await badgeBecomes(api, 'holder-silent', 8_000);
    assert.equal(badge.text, '$(warning) HOLDER SILENT');
    assert.equal(badge.severity, 'warning');
    assert.match(badge.tooltip, new RegExp(`Holder: ${BOB}.*Silent since`, 's'));
    // Alice is not an operator; with no queue she may take over, so the click acquires.
    assert.equal(badge.command, 'lockstep.acquire');
  });

  test('Stale grant: alice acquires with a short TTL, it expires, bob takes over; error colour', async () => {
    // Alice's terminal grant runs out a second from now (the shortest lease, dated back: lapsingGrantAs).
    const aliceGrant = (await lapsingGrantAs(ALICE, fixture.alice)).grant;
    const { grant } = await as(BOB, async c => {
      await until("alice's lease to run out", async () => (await c.status()).canAcquire, 8_000);
      return c.acquire();
    });
    assert.equal(grant, aliceGrant + 1);
    await until(
      `alice to see Stale under grant #${grant}`,
      () => api.badge().state === 'stale' && api.activeContainer()?.status?.grant === grant,
      8_000,
    );
    const badge = api.badge();
    assert.equal(
      badge.text,
      `$(error) Stale grant #${aliceGrant} — push blocked · $(warning) caution`,
      'bob took over a silent holder: the caution mark',
    );
    assert.equal(badge.severity, 'error');
    assert.match(badge.tooltip, new RegExp(`Lapsed: your lease #${aliceGrant} has ended: grant #${grant} was issued to ${BOB}`));
    assert.match(badge.tooltip, new RegExp(`Holder: ${BOB}`));
  });

  test('Offline: the store becomes unreachable, the badge says so (error colour), and comes back by itself', async () => {
    const moved = `${fixture.store}.away`;
    fs.renameSync(fixture.store, moved);
    fs.writeFileSync(fixture.store, 'not a folder\n');
    try {
      await vscode.commands.executeCommand('lockstep.refresh');
      const badge = await badgeBecomes(api, 'offline');
      assert.equal(badge.text, '$(debug-disconnect) Offline');
      assert.equal(badge.severity, 'error');
      assert.equal(badge.command, 'lockstep.refresh');
      assert.match(badge.tooltip, /backend unreachable/);
      assert.match(badge.tooltip, /Retrying in \d+s/);
    } finally {
      fs.rmSync(fixture.store);
      fs.renameSync(moved, fixture.store);
    }
    // Nobody clicks: the back-off retry finds the store again.
    await badgeBecomes(api, 'free', 20_000);
  });

  test('Not initialised: .lockstep.json goes away; click initialises; it comes back when the file does', async () => {
    const file = path.join(fixture.alice, '.lockstep.json');
    const kept = fs.readFileSync(file);
    fs.rmSync(file);
    try {
      const badge = await badgeBecomes(api, 'not-initialised');
      assert.equal(badge.text, '$(circle-slash) Lockstep: not initialised');
      assert.equal(badge.command, 'lockstep.initialise');
    } finally {
      fs.writeFileSync(file, kept);
    }
    await badgeBecomes(api, 'free', 15_000);
  });
});
