import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { systemClock, type Clock } from '../../../src/core/clock';
import { Container } from '../../../src/core/container/container';
import type { LockstepAPI } from '../../../src/extension/api';
import { ALICE, badgeBecomes, dismissNotifications, fixture, lockstepApi, resetToFree } from './backend';
import { until } from './until';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

// The 24-hour cap warning in the real host (the pure plan is unit-tested in src/core/holdWarnings.ts's tests):
// alice's terminal took the lock 23 h 35 min ago — its clock is set back that far, so the record says so — with a
// day-long lease, and her window adopts it: the cap is 25 minutes away, inside the 30-minute warning.
suite('the 24-hour cap warning', () => {
  let api: LockstepAPI;
  suiteSetup(async () => {
    api = await lockstepApi();
  });
  setup(async () => {
    await resetToFree(api);
  });
  teardown(dismissNotifications);
  suiteTeardown(async () => {
    if (api) await resetToFree(api);
  });

  test('a grant 23 h 35 min old warns once, and re-reads do not warn again', async () => {
    const past: Clock = { ...systemClock, now: () => Date.now() - (23 * HOUR + 35 * MINUTE) };
    const terminal = await Container.open({ cwd: fixture.alice, env: { ...process.env, LOCKSTEP_IDENTITY: ALICE }, clock: past });
    const { grant } = await terminal.acquire({ ttl: 24 * 3600 }).finally(() => terminal.close());
    const warned = () => api.logLines().filter(line => line.includes(`cap warning for grant #${grant}`)).length;
    assert.equal(warned(), 0);

    await vscode.commands.executeCommand('lockstep.refresh');
    await badgeBecomes(api, 'held-by-me');
    const held = api.activeContainer()!.status!.holder!;
    assert.equal(held.grant, grant);
    const capIn = held.grantedAt + 24 * HOUR - Date.now();
    assert.ok(
      capIn > 20 * MINUTE && capIn < 30 * MINUTE,
      `the cap is inside the 30-minute warning (${Math.round(capIn / MINUTE)} min away)`,
    );
    await until('the cap warning to be shown', () => warned() === 1);

    // Every re-read plans the warnings again (the listener runs as the model fires): it must not repeat.
    for (let i = 0; i < 3; i++) await vscode.commands.executeCommand('lockstep.refresh');
    assert.equal(warned(), 1, 'once per grant');
  });
});
