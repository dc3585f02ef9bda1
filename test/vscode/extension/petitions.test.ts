import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { LockstepAPI } from '../../../src/extension/api';
import { BOB, badgeBecomes, cli, dismissNotifications, fixture, lockstepApi, resetToFree } from './backend';
import { until } from './until';

// Issue 26: the holder hears of a petition — once per petitioner, with the note — and the badge counts who waits.
suite('petitions reach the holder', () => {
  let api: LockstepAPI;
  suiteSetup(async () => {
    api = await lockstepApi();
  });
  setup(async () => {
    await resetToFree(api);
  });
  suiteTeardown(async () => {
    if (api) {
      await dismissNotifications();
      await resetToFree(api);
    }
  });

  const told = (who: string) => api.logLines().filter(line => line.includes(`${who} petitioned for the lock`));

  test('bob petitions with a note from his terminal: alice is told once, and her badge reads "1 waiting"', async () => {
    const grant = await vscode.commands.executeCommand<number>('lockstep.acquire');
    assert.equal(typeof grant, 'number');
    await badgeBecomes(api, 'held-by-me');
    const before = told(BOB).length;
    const petitioned = await cli(fixture.bob, ['petition', '--note', 'the parser'], BOB);
    assert.equal(petitioned.code, 0, JSON.stringify(petitioned.json));
    await until("alice's badge to count bob", () => / · 1 waiting$/.test(api.badge().text), 15_000);
    await until('the notice to be logged', () => told(BOB).length === before + 1, 5_000);
    assert.match(told(BOB).at(-1)!, /bob@example\.com petitioned for the lock \(1 waiting\)$/);
    // A later read of the same queue tells nobody again.
    await vscode.commands.executeCommand('lockstep.refresh');
    await until('a refresh to be read', () => api.badge().state === 'held-by-me');
    assert.equal(told(BOB).length, before + 1);
    await dismissNotifications();
  });

  test('with lockstep.notifyPetitions off, alice is not notified (the log says so) and the badge still counts', async () => {
    const settings = vscode.workspace.getConfiguration('lockstep');
    await settings.update('notifyPetitions', false, vscode.ConfigurationTarget.Workspace);
    try {
      await vscode.commands.executeCommand<number>('lockstep.acquire');
      await badgeBecomes(api, 'held-by-me');
      const before = told(BOB).length;
      const petitioned = await cli(fixture.bob, ['petition'], BOB);
      assert.equal(petitioned.code, 0, JSON.stringify(petitioned.json));
      await until("alice's badge to count bob", () => / · 1 waiting$/.test(api.badge().text), 15_000);
      await until('the petition to be logged', () => told(BOB).length === before + 1, 5_000);
      assert.match(told(BOB).at(-1)!, /petitioned for the lock \(1 waiting\); lockstep\.notifyPetitions is off$/);
    } finally {
      await settings.update('notifyPetitions', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });
});
