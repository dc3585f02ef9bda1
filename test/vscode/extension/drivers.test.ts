import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LockstepAPI } from '../../../src/extension/api';
import {
  ALICE,
  BOB,
  EXTENSION_ID,
  OPS,
  badgeBecomes,
  cli,
  commitInAlice,
  dismissNotifications,
  fixture,
  git,
  lockstepApi,
  statusAs,
} from './backend';
import { behaviourGroup } from '../../helpers/behaviours';
import { until } from './until';

// The essentials of a container on one driver, in this host: run once per driver by scripts/suites/vscode.sh
// (runExtensionTests.mjs --driver D --tests drivers), each on a fresh container initialised on D, against the real
// server the suite started. The tests build on each other in order, as a first morning would: Free, acquire (#1), a
// coworker's petition from the command line, push and release, and then a page the store does not hold.
const driver = process.env.LOCKSTEP_TEST_DRIVER ?? 'file';
/** What `.lockstep.json` says for each label the runner knows. */
const WRITTEN: Record<string, string> = {
  file: 'file',
  sqlite: 'sql',
  mariadb: 'sql',
  postgres: 'sql',
  redis: 'redis',
  etcd: 'etcd',
  git: 'git',
};

/**
 * Whether the extension as loaded can open SQLite: the host's Node has node:sqlite (22.5+), or better-sqlite3
 * resolves from the extension's own folder (it does from the project, never from the .vsix, which leaves it out).
 */
function extensionHasSqlite(): boolean {
  const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  try {
    if (getBuiltin?.('node:sqlite')) return true;
  } catch {
    /* not in this Node */
  }
  const extensionPath = vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath;
  try {
    require.resolve('better-sqlite3', { paths: [path.join(extensionPath, 'dist')] });
    return true;
  } catch {
    return false;
  }
}

const count = (api: LockstepAPI, pattern: RegExp) => api.logLines().filter(line => pattern.test(line)).length;

if (driver === 'sqlite' && !extensionHasSqlite()) {
  suite(`SQLite in VS Code ${vscode.version} (Node ${process.versions.node}, no node:sqlite, no better-sqlite3)`, function () {
    behaviourGroup(this, 'SQLite in a VS Code host without node:sqlite or better-sqlite3');
    teardown(dismissNotifications);

    test('the badge is an error that says why and what to use instead, never Free; acquire changes nothing', async () => {
      const api = await lockstepApi();
      // A configuration error (SQLite cannot run in this host), not an unreachable store: "settings not valid".
      const badge = await badgeBecomes(api, 'misconfigured', 15_000);
      assert.equal(badge.severity, 'error');
      assert.match(badge.tooltip, /SQLite is not available in this Node host: node:sqlite needs Node 22\.5 or later/);
      assert.match(badge.tooltip, /Use PostgreSQL or MySQL \(LOCKSTEP_DATABASE_URL\), or the file driver/);
      const before = count(api, /Acquire.*SQLite is not available/);
      // The error notification waits for an answer ("Show Log"); it is dismissed here, as a person might.
      const acquired = vscode.commands.executeCommand('lockstep.acquire');
      await until('the failed acquire to be logged', () => count(api, /Acquire.*SQLite is not available/) > before);
      await dismissNotifications();
      assert.equal(await acquired, undefined, 'no grant');
      // The store itself is fine (this test reads it through the project's better-sqlite3): nothing was granted.
      const status = await statusAs(OPS);
      assert.equal(status.grant, 0);
      assert.equal(status.holder, null);
    });
  });
} else {
  suite(`the ${driver} driver in VS Code ${vscode.version} (Node ${process.versions.node})`, function () {
    // One behaviour per test, whichever driver and host ran it (the tally counts distinct behaviours).
    behaviourGroup(this, 'a container driver in VS Code');
    let api: LockstepAPI;
    suiteSetup(async () => {
      api = await lockstepApi();
    });
    teardown(dismissNotifications);

    test('a fresh container on the driver under test reads Free (last grant #0)', async () => {
      const file = JSON.parse(fs.readFileSync(path.join(fixture.alice, '.lockstep.json'), 'utf8')) as { driver: string };
      assert.equal(file.driver, WRITTEN[driver], '.lockstep.json names the driver under test');
      const badge = await badgeBecomes(api, 'free', 15_000);
      assert.equal(badge.text, '$(unlock) Free');
      assert.match(badge.tooltip, /Free \(last grant #0\)/);
      assert.ok(count(api, new RegExp(`on the ${WRITTEN[driver]} driver, as ${ALICE}`)) >= 1, 'the window opened it on that driver');
    });

    if (driver === 'git') {
      test("the window reads the lock page's history in the background: the clone keeps it before any lock page opens", async () => {
        // ContainerModel.prepareTimeline, a few seconds after the first read: the clone's first read of the history
        // is paid then, not when the page opens (issue 30). Only the git driver keeps a history.
        const kept = path.join(fixture.alice, '.git', 'lockstep');
        const histories = () => (fs.existsSync(kept) ? fs.readdirSync(kept).filter(name => /^history-[0-9a-f]{32}\.json$/.test(name)) : []);
        await until("the history's entries to be kept in .git/lockstep", () => histories().length === 1, 30_000);
        const stored = JSON.parse(fs.readFileSync(path.join(kept, histories()[0]!), 'utf8')) as { entries: { summary: string }[] };
        assert.ok(stored.entries.length >= 1, 'the creation of the page is in it');
        assert.equal(
          vscode.window.tabGroups.all.flatMap(g => g.tabs).some(t => t.label.includes('Lock Page')),
          false,
          'no lock page was opened',
        );
      });
    }

    test('Acquire turns it Held by me with grant #1, in the store too', async () => {
      assert.equal(await vscode.commands.executeCommand<number>('lockstep.acquire'), 1);
      const badge = await badgeBecomes(api, 'held-by-me');
      assert.match(badge.text, /^\$\(pass-filled\) Held by me #1 · /);
      const stored = await statusAs(OPS);
      assert.deepEqual([stored.holder?.identity, stored.holder?.grant], [ALICE, 1]);
    });

    test('a petition bob makes with the CLI in his clone shows in this window by itself', async () => {
      const petition = await cli(fixture.bob, ['petition', '--note', 'after alice']);
      assert.equal(petition.code, 0, JSON.stringify(petition.json));
      assert.equal(petition.json.position, 1);
      // Live updates where the driver has them, else the poll (lockstep.pollSeconds, 10 s): no refresh from here.
      await until('bob to appear in the queue', () => api.activeContainer()?.status?.queue.some(w => w.identity === BOB) === true, 20_000);
      assert.match(api.badge().tooltip, new RegExp(`Queue: 1\\. ${BOB}`));
    });

    test("release is refused before the push and works after it; bob's turn follows", async () => {
      await commitInAlice('notes.txt', `work on ${driver}\n`);
      const before = count(api, /Release refused/);
      const refused = vscode.commands.executeCommand('lockstep.release');
      await until('the release to be refused', () => count(api, /Release refused/) > before);
      await dismissNotifications();
      assert.equal(await refused, undefined);
      assert.equal((await statusAs(OPS)).holder?.grant, 1, 'still held');
      // The push passes the pre-push guard (which reads the same store: alice holds the live grant).
      await git(fixture.alice, 'push', '--quiet', 'origin', 'main');
      assert.equal(await vscode.commands.executeCommand('lockstep.release'), 1);
      await until('the window to see the lock released', () => api.activeContainer()?.status?.holder === null);
      assert.notEqual(api.badge().state, 'held-by-me');
      const stored = await statusAs(OPS);
      assert.equal(stored.holder, null);
      assert.equal(stored.turn?.identity, BOB, 'the head of the queue has the handover window');
    });

    test('a container whose page this store does not hold reads as an error, not Free', async () => {
      const file = path.join(fixture.alice, '.lockstep.json');
      const kept = fs.readFileSync(file);
      // A pull brings a .lockstep.json naming a container that was never initialised on this store.
      fs.writeFileSync(file, `${JSON.stringify({ ...JSON.parse(kept.toString('utf8')), container: randomUUID() }, null, 2)}\n`);
      try {
        const badge = await badgeBecomes(api, 'no-page', 15_000);
        assert.equal(badge.severity, 'error');
        assert.match(badge.tooltip, /holds no lock page for container/);
      } finally {
        fs.writeFileSync(file, kept);
      }
      await until('the real container to be read again', () => api.activeContainer()?.status?.grant === 1, 15_000).catch(error => {
        throw new Error(`${(error as Error).message}; the badge shows ${api.statusText()}`);
      });
    });
  });
}
