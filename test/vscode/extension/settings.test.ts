import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LockstepAPI } from '../../../src/extension/api';
import {
  ALICE,
  BOB,
  OPS,
  as,
  badgeBecomes,
  cli,
  closeEditorsAndNotifications,
  editAndRevert,
  fixture,
  lockstepApi,
  resetToFree,
  statusAs,
} from './backend';
import { until } from './until';

const count = (api: LockstepAPI, pattern: RegExp) => api.logLines().filter(line => pattern.test(line)).length;
/** The line the window logs each time it (re)opens its container. */
const OPENED = /container [0-9a-f-]{36} on the file driver, as /;

/** Sets a `lockstep.*` user setting (never the folder's .vscode/settings.json: an edit there would acquire). */
async function set(name: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration('lockstep').update(name, value, vscode.ConfigurationTarget.Global);
}

/** Sets a setting and waits until the window has reopened its container with it (every lockstep.* change reopens). */
async function setAndReopen(api: LockstepAPI, name: string, value: unknown): Promise<void> {
  const before = count(api, OPENED);
  await set(name, value);
  await until(`the container to reopen after lockstep.${name} changed`, () => count(api, OPENED) > before);
}

suite('the settings in VS Code', () => {
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

  test("lockstep.identity: the window acts as that identity instead of git's user.email", async () => {
    const carol = 'carol@example.com';
    try {
      await setAndReopen(api, 'identity', carol);
      assert.match(
        api
          .logLines()
          .filter(l => OPENED.test(l))
          .at(-1)!,
        new RegExp(`as ${carol}`),
      );
      assert.equal(await vscode.commands.executeCommand('lockstep.petition', 'as carol'), 1);
      assert.deepEqual(
        (await statusAs(OPS)).queue.map(p => p.identity),
        [carol],
      );
      assert.equal(await vscode.commands.executeCommand('lockstep.withdraw'), true);
      assert.deepEqual((await statusAs(OPS)).queue, []);
    } finally {
      await setAndReopen(api, 'identity', undefined);
    }
    assert.match(
      api
        .logLines()
        .filter(l => OPENED.test(l))
        .at(-1)!,
      new RegExp(`as ${ALICE}`),
    );
  });

  test('lockstep.acquireOnEdit off: a first edit in a free container acquires nothing', async () => {
    const attempts = /on first edit|acquire on edit/;
    const before = count(api, attempts);
    await set('acquireOnEdit', false);
    try {
      await editAndRevert('src/greeting.ts', '// not acquiring\n');
      // Had the edit started an acquisition, bob would find the lock taken (or alice's attempt would fail and log).
      await as(BOB, c => c.acquire());
      await badgeBecomes(api, 'held-by-other');
      assert.equal((await statusAs(OPS)).holder?.identity, BOB);
      assert.equal(count(api, attempts), before, 'no acquisition on edit was attempted');
    } finally {
      await set('acquireOnEdit', undefined);
    }
  });

  test('lockstep.logLevel: debug keeps every heartbeat in the log; error keeps them out', async () => {
    const debugLines = () => count(api, /^\[debug\] /);
    assert.equal(debugLines(), 0, 'at the default (info) nothing below info is written');
    const heartbeat = /^\[debug\] .*: heartbeat, lease until /;
    try {
      await set('logLevel', 'debug');
      await vscode.commands.executeCommand('lockstep.acquire');
      await badgeBecomes(api, 'held-by-me');
      await until('a heartbeat in the log', () => count(api, heartbeat) > 0, 10_000);

      await set('logLevel', 'error');
      const kept = debugLines();
      // Every heartbeat that writes the store after this read comes after the change of level.
      const renewedAfter = (await statusAs(OPS)).holder!.expiresAt;
      await until('another heartbeat', () => (api.activeContainer()?.status?.holder?.expiresAt ?? 0) > renewedAfter, 10_000);
      assert.equal(debugLines(), kept, 'no heartbeat written at level error');
    } finally {
      await set('logLevel', undefined);
    }
  });

  test('lockstep.pollSeconds: where live updates are unavailable, the window re-reads on that interval', async () => {
    await as(OPS, c => c.acquire());
    await badgeBecomes(api, 'held-by-other');
    // The store is away while the window reopens, so its file watch cannot start: it polls instead.
    const moved = `${fixture.store}.away`;
    const unavailable = count(api, /live updates unavailable, polling instead/);
    fs.renameSync(fixture.store, moved);
    fs.writeFileSync(fixture.store, 'not a folder\n');
    try {
      await set('pollSeconds', 1);
      await until('the window to give up on live updates', () => count(api, /live updates unavailable, polling instead/) > unavailable);
    } finally {
      fs.rmSync(fixture.store);
      fs.renameSync(moved, fixture.store);
    }
    try {
      await badgeBecomes(api, 'held-by-other');
      const model = api.activeContainer()!;
      let arrivedAt: number | undefined;
      const subscription = model.onDidChange(m => {
        if (arrivedAt === undefined && m.status?.queue.some(p => p.identity === BOB)) arrivedAt = Date.now();
      });
      try {
        const petitioned = await cli(fixture.bob, ['petition']);
        assert.equal(petitioned.code, 0, JSON.stringify(petitioned.json));
        const at = Date.now();
        await until("bob's petition to reach alice's window by polling", () => arrivedAt !== undefined, 10_000);
        // Without a watch, only the poll reads: every second here, against 10 s by default and 30 s for the safety net.
        assert.ok(arrivedAt! - at < 3_000, `arrived ${arrivedAt! - at} ms after the petition`);
      } finally {
        subscription.dispose();
      }
    } finally {
      await setAndReopen(api, 'pollSeconds', undefined);
    }
  });

  test('lockstep.store.path cannot move the page: the committed store (LOCKSTEP_PATH naming it) is read; pointing away reads "no page", naming the setting, never Free', async () => {
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-elsewhere-'));
    const environment = process.env.LOCKSTEP_PATH;
    const away = path.join(elsewhere, 'store');
    try {
      // The environment names the committed store: it wins over the setting, and the window reads the lock there.
      await setAndReopen(api, 'store.path', elsewhere);
      await vscode.commands.executeCommand('lockstep.refresh');
      assert.equal(api.badge().state, 'free');
      // Without it the setting would move the page: refused before any store is opened (a second page is how a
      // team forks its lock), shown as an error that says which setting and where the committed page is.
      delete process.env.LOCKSTEP_PATH;
      await set('store.path', away);
      await badgeBecomes(api, 'no-page');
      const tooltip = api.badge().tooltip;
      assert.match(tooltip, /the path setting points at another lock page/);
      assert.match(tooltip, new RegExp(away.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')));
      const { container } = JSON.parse(fs.readFileSync(path.join(fixture.alice, '.lockstep.json'), 'utf8')) as { container: string };
      assert.match(tooltip, new RegExp(`commits for container ${container.slice(0, 8)}…`));
      assert.equal(fs.existsSync(away), false, 'nothing was created where the setting points');
    } finally {
      process.env.LOCKSTEP_PATH = environment;
      await set('store.path', undefined);
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
    await badgeBecomes(api, 'free');
  });
});
