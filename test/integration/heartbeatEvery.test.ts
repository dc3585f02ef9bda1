import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { childEnv, finished, type Finished } from '../helpers/children';
import { cliPath, createGitFixture, type GitFixture, type TeamMember } from '../helpers/gitFixture';
import { waitFor } from '../helpers/waitFor';

/**
 * `lockstep heartbeat --every S` as a terminal-only lead runs it: a real long-running `lockstep`
 * process in a real clone, on the file driver, ended by a release from another process, by a
 * signal, or by losing the lease (the process was frozen with SIGSTOP past the lease's expiry).
 */
describe('lockstep heartbeat --every (real processes, file driver)', function () {
  this.timeout(120_000);
  let team: GitFixture;
  let lead: TeamMember, ana: TeamMember;

  before(async () => {
    team = await createGitFixture({ members: ['lead', 'ana'], operators: [] });
    [lead, ana] = team.members;
  });
  after(() => team?.dispose());

  /** Starts `lockstep --cwd DIR [--json] heartbeat --every S` with the fixture's environment. */
  async function startHeartbeat(
    who: TeamMember,
    every: string,
    json = false,
  ): Promise<{ child: ChildProcess; stderr: () => string; done: Promise<Finished> }> {
    const env = childEnv({
      HOME: path.join(team.root, 'home'),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      LOCKSTEP_PATH: team.store,
    });
    const child = spawn(process.execPath, [await cliPath(), '--cwd', who.dir, ...(json ? ['--json'] : []), 'heartbeat', '--every', every], {
      cwd: team.root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    return { child, stderr: () => stderr, done: finished(child, 90_000) };
  }

  const state = async (who: TeamMember) => (await team.cli(who, ['status'])).json;

  it('keeps extending the lease past its first TTL, and ends with exit 0 when the lead releases', async () => {
    // The shortest lease (60 s), dated so that it runs out 10 s from now (lapsingGrant.ts): the loop must renew it by
    // then (10 s: a loop that starts slowly on a loaded machine still renews in time).
    const acquired = await team.lapsingGrant(lead, 10_000);
    const beat = await startHeartbeat(lead, '1', true);
    await waitFor(() => Date.now() > acquired.expiresAt + 1_000, { timeoutMs: 30_000, description: 'the first TTL to pass' });
    const held = await state(lead);
    assert.equal(held.state, 'held-by-me', `still held after the first TTL; the loop said: ${beat.stderr()}`);
    assert.ok(held.holder.expiresAt > acquired.expiresAt);
    assert.equal((await team.cli(lead, ['release'])).json.ok, true);
    const done = await beat.done;
    assert.equal(done.code, 0, done.stderr);
    const out = JSON.parse(done.stdout.trim());
    assert.equal(out.ended, 'released');
    assert.ok(out.renewals >= 1);
    assert.equal(out.grant, 1);
  });

  it('stops on SIGTERM with exit 0 without releasing: the lease stays held until it expires', async () => {
    assert.equal((await team.cli(ana, ['acquire'])).json.ok, true);
    const beat = await startHeartbeat(ana, '30');
    await waitFor(() => /Heartbeat every/.test(beat.stderr()), { timeoutMs: 20_000, description: 'the loop to start' });
    beat.child.kill('SIGTERM');
    const done = await beat.done;
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /Stopped — grant #2 is no longer renewed/);
    assert.equal((await state(ana)).state, 'held-by-me');
    assert.equal((await team.cli(ana, ['release'])).json.ok, true);
  });

  it('Windows: `heartbeat --stop` ends the loop through its stop file (SIGTERM never arrives there), releasing nothing', async () => {
    assert.equal((await team.cli(ana, ['acquire'])).json.ok, true);
    const beat = await startHeartbeat(ana, '30');
    await waitFor(() => /Heartbeat every/.test(beat.stderr()), { timeoutMs: 20_000, description: 'the loop to start' });
    const stop = await team.cli(ana, ['heartbeat', '--stop']);
    assert.equal(stop.json.ok, true);
    assert.equal(stop.json.stopRequested, true);
    const done = await beat.done;
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /Stopped — grant #\d+ is no longer renewed/);
    assert.doesNotMatch(done.stderr, /Extended/, 'noticed by the folder watch, before its first renewal');
    assert.equal((await state(ana)).state, 'held-by-me', 'the stop releases nothing');
    assert.ok(!fs.existsSync(path.join(ana.dir, '.git', 'lockstep', 'heartbeat.stop')), 'the loop removed the stop file it obeyed');
    // A stop file left from before (a --stop with no loop running) does not end the next loop.
    assert.equal((await team.cli(ana, ['heartbeat', '--stop'])).json.ok, true);
    const next = await startHeartbeat(ana, '30');
    await waitFor(() => /Heartbeat every/.test(next.stderr()), { timeoutMs: 20_000, description: 'the next loop to start' });
    // Released from another process: the removed session is noticed by the watch, long before a 30 s tick.
    assert.equal((await team.cli(ana, ['release'])).json.ok, true);
    const released = await next.done;
    assert.equal(released.code, 0, released.stderr);
    assert.match(released.stdout, /Released elsewhere — heartbeat for grant #\d+ ended after 0 renewals/);
  });

  it('exits 1 (lease-lost) when its lease expired while it could not renew, and the lease is not revived', async () => {
    // The shortest lease (60 s), dated so that it runs out 6 s from now (lapsingGrant.ts).
    const acquired = await team.lapsingGrant(lead, 6_000);
    const beat = await startHeartbeat(lead, '30');
    await waitFor(() => /Heartbeat every/.test(beat.stderr()), { timeoutMs: 20_000, description: 'the loop to start' });
    // Frozen before its first renewal (at half the 6 s left): the lease runs out meanwhile.
    beat.child.kill('SIGSTOP');
    try {
      await waitFor(async () => (await state(ana)).state === 'holder-silent', { timeoutMs: 30_000, description: 'the lease to expire' });
    } finally {
      beat.child.kill('SIGCONT');
    }
    const done = await beat.done;
    assert.equal(done.code, 1, done.stdout + done.stderr);
    assert.match(done.stderr, /lockstep: Your lease \(grant #\d+\) expired at .* before a heartbeat renewed it, so it is lost/);
    assert.doesNotMatch(done.stderr, /Extended/, 'it never renewed');
    const after = await state(lead);
    assert.equal(after.state, 'stale', 'nothing revived the lost lease');
    assert.equal(after.holder.expiresAt, acquired.expiresAt);
    const token = team.sessionToken(lead);
    assert.match(token ?? '', /^[0-9a-f]{64}$/);
    assert.ok(!(done.stdout + done.stderr).includes(token!), 'the owner token is never printed');
  });
});
