import * as assert from 'node:assert/strict';
import { systemClock, type Clock } from '../../src/core/clock';
import { Container } from '../../src/core/container/container';
import { openDriver } from '../../src/core/drivers';
import type { Driver } from '../../src/core/stores/store';
import { finished } from '../helpers/children';
import { createGitFixture, expectOk, type GitFixture, type TeamMember } from '../helpers/gitFixture';
import { waitFor } from '../helpers/waitFor';

/**
 * "Your turn" at once (issue 30): a waiter hears of the holder's release through the driver's watch
 * (here the file driver's file-system watch), with its one-second poll only as the backup. The holder
 * is a `lockstep` process in another clone; the waiter is this process's Container (so that its clock
 * and driver can be chosen) or a `lockstep wait` process.
 */

/**
 * A clock whose waits of a second or more (the waiter's backup poll) end only when woken, never by
 * time: a waiter on it returns only because an announcement woke it. `parked` counts such waits.
 */
function announcementOnlyClock(): Clock & { parked: number } {
  const clock = {
    ...systemClock,
    parked: 0,
    sleep: (ms: number, signal?: AbortSignal) => {
      if (ms < 1_000) return systemClock.sleep(ms, signal);
      return new Promise<void>(resolve => {
        clock.parked++;
        if (signal?.aborted) return resolve();
        signal?.addEventListener('abort', () => resolve(), { once: true });
      });
    },
  };
  return clock;
}

describe('your turn at once: a waiting acquire wakes on the release', function () {
  this.timeout(120_000);
  let team: GitFixture;
  let alice: TeamMember;
  let bob: TeamMember;

  before(async () => {
    team = await createGitFixture({ members: ['alice', 'bob'], operators: [] });
    alice = team.member('alice');
    bob = team.member('bob');
  });
  after(() => team?.dispose());

  const openBob = (options: { clock?: Clock; driverInstance?: Driver } = {}) =>
    Container.open({ cwd: bob.dir, env: { LOCKSTEP_PATH: team.store }, ...options });

  it('the release is announced (file-system watch) and wakes the wait: its backup poll never ran out', async () => {
    const clock = announcementOnlyClock();
    const container = await openBob({ clock });
    try {
      expectOk(await team.cli(alice, ['acquire']), 'alice acquires');
      const acquired = container.acquire({ wait: 60 });
      await waitFor(() => clock.parked > 0, { timeoutMs: 30_000, description: "bob's acquire waiting" });
      expectOk(await team.cli(alice, ['release']), 'alice releases');
      const { grant } = await acquired;
      assert.equal((await container.status()).holder?.identity, bob.identity);
      await container.release();
      assert.ok(grant > 1);
    } finally {
      await container.close();
    }
  });

  it('an announcement that never comes (a driver without a watch) costs the backup poll: the wait still returns', async () => {
    const probe = await openBob();
    const driver = await openDriver(probe.config);
    await probe.close();
    // The same store, announcing nothing; a real clock that counts the waiter's backup polls.
    const silent: Driver = {
      name: driver.name,
      distributed: driver.distributed,
      claim: driver.claim.bind(driver),
      extend: driver.extend.bind(driver),
      release: driver.release.bind(driver),
      read: driver.read.bind(driver),
      compareAndSwap: driver.compareAndSwap.bind(driver),
      close: async () => undefined,
    };
    const clock = {
      ...systemClock,
      polls: 0,
      sleep: (ms: number, signal?: AbortSignal) => {
        if (ms >= 1_000) clock.polls++;
        return systemClock.sleep(ms, signal);
      },
    };
    const container = await openBob({ driverInstance: silent, clock });
    try {
      expectOk(await team.cli(alice, ['acquire']), 'alice acquires');
      const acquired = container.acquire({ wait: 60 });
      await waitFor(() => clock.polls > 0, { timeoutMs: 30_000, description: "bob's acquire polling" });
      expectOk(await team.cli(alice, ['release']), 'alice releases');
      await acquired;
      assert.equal((await container.status()).holder?.identity, bob.identity);
      await container.release();
    } finally {
      await container.close();
      await driver.close();
    }
  });

  it('`lockstep wait` in another process returns once the holder releases', async () => {
    expectOk(await team.cli(alice, ['acquire']), 'alice acquires');
    const child = team.spawnCli(bob, ['wait', '--timeout', '60']);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const done = finished(child, 90_000);
    await waitFor(() => /waiting/.test(stderr), { timeoutMs: 60_000, description: 'lockstep wait waiting' });
    expectOk(await team.cli(alice, ['release']), 'alice releases');
    const ended = await done;
    assert.equal(ended.code, 0, `${ended.stdout}${stderr}`);
    assert.match(ended.stdout, /free — acquire it now|Your turn/);
  });
});
