/**
 * THE container contract: the container lock's transitions through the command line and both guards with real
 * git, as one reusable mocha story run on every container driver (file, SQLite, git in the integration suite;
 * Redis, MariaDB, PostgreSQL in the live suites). A driver test file calls
 *
 *   describeContainerContract('redis', async () => ({ driver: 'redis', initArgs: ['--driver', 'redis'], env: {…} }));
 *
 * `setUp` runs in `before` (after the backend is up) and returns what the team needs for that driver: its
 * `lockstep init` arguments, its environment, and commands to run first (`migrate`). The container is made by
 * `lockstep init` only, through createFencingTeam. The steps are one story told in order.
 */
import * as assert from 'node:assert/strict';
import { behaviourGroup } from '../helpers/behaviours';
import {
  createFencingTeam, refusedByClient, refusedByServer, type CliResult, type FencingTeam, type FencingTeamOptions, type TeamMember,
} from '../helpers/fencingFixture';
import { expectOk } from '../helpers/gitFixture';

export type ContainerSetUp = Pick<FencingTeamOptions, 'initArgs' | 'env' | 'beforeInit'> & {
  /** The driver `lockstep status` must report for this container. */
  readonly driver: string;
};

export function describeContainerContract(label: string, setUp: (context: Mocha.Context) => Promise<ContainerSetUp>): void {
  describe(`container contract: ${label}`, function () {
    behaviourGroup(this, 'container contract');
    this.timeout(180_000);
    let team: FencingTeam;
    let alice: TeamMember, bob: TeamMember;
    let driver: string;
    const push = (who: TeamMember, ...extra: string[]) => team.git(who.dir, ['push', ...extra, 'origin', 'HEAD:refs/heads/main']);
    const status = async (who: TeamMember) => expectOk(await team.lockstep(who.dir, ['status']), `status of ${who.name}`);
    const landed = (result: CliResult, what: string) => assert.equal(result.code, 0, `${what}: ${result.stderr}`);

    before(async function () {
      const { driver: expected, ...options } = await setUp(this);
      driver = expected;
      team = await createFencingTeam({ members: ['alice', 'bob'], ...options });
      [alice, bob] = team.members;
    });
    after(() => team?.dispose());

    it('runs on the driver under test', async () => {
      assert.equal((await status(alice)).driver, driver);
    });

    it('starts free; alice acquires grant #1; bob is busy (exit 3) and petitions; both clones see the same page', async () => {
      assert.equal((await status(bob)).state, 'free');
      assert.equal(expectOk(await team.lockstep(alice.dir, ['acquire']), 'acquire').grant, 1);
      const busy = await team.lockstep(bob.dir, ['acquire']);
      assert.equal(busy.code, 3, busy.stdout);
      assert.equal(expectOk(await team.lockstep(bob.dir, ['petition']), 'petition').position, 1);
      const seen = await status(bob);
      assert.deepEqual([seen.state, seen.holder.identity, seen.grant, seen.position], ['queued', alice.identity, 1, 1]);
      assert.equal((await status(alice)).state, 'held-by-me');
    });

    it('bob\'s push to the protected branch is refused by his pre-push guard, and with --no-verify by the remote\'s guard', async () => {
      const before = team.remoteSha();
      await team.commit(bob, 'bob.txt');
      assert.match(refusedByClient(await push(bob), 'bob push'), /lockstep: /);
      refusedByServer(await push(bob, '--no-verify'), 'bob push --no-verify');
      assert.equal(team.remoteSha(), before, 'the protected branch did not move');
      await team.gitOk(bob.dir, 'reset', '--quiet', '--hard', 'origin/main');
    });

    it('alice lands while she holds, releases, and the lock passes to bob (grant #2), who lands', async () => {
      const mine = await team.commit(alice, 'alice.txt');
      const pushed = await push(alice);
      landed(pushed, 'alice push');
      assert.match(pushed.stderr, /lockstep: grant #1 verified for main\./);
      assert.equal(team.remoteSha(), mine);
      assert.equal(expectOk(await team.lockstep(alice.dir, ['release']), 'release').next, bob.identity);
      assert.equal((await status(bob)).state, 'your-turn');
      assert.equal(expectOk(await team.lockstep(bob.dir, ['acquire']), 'acquire').grant, 2);
      await team.gitOk(bob.dir, 'pull', '--quiet', '--ff-only', 'origin', 'main');
      const his = await team.commit(bob, 'bob.txt');
      landed(await push(bob), 'bob push');
      assert.equal(team.remoteSha(), his);
    });

    it('alice, no longer holding, is refused by both guards', async () => {
      await team.gitOk(alice.dir, 'pull', '--quiet', '--ff-only', 'origin', 'main');
      const before = team.remoteSha();
      await team.commit(alice, 'late.txt');
      refusedByClient(await push(alice), 'alice late push');
      refusedByServer(await push(alice, '--no-verify'), 'alice late push --no-verify');
      assert.equal(team.remoteSha(), before);
    });

    it('no owner token or push proof appeared in anything printed', () => {
      team.assertNoSecretLeaked();
    });
  });
}
