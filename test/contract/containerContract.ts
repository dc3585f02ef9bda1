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
 *
 * Real time passes twice: the queue head's handover window (10 s on an unloaded machine, scaled by the run's
 * slowdown, test/helpers/calibration.ts, so that the few CLI calls it must hold fit on a busy one) and the lapse of
 * a holder's lease, made through lapsingGrant.ts (a container lease is 60 s at least; the grant is dated back so
 * that it runs out seconds after it is written). Both are waited for as conditions, never slept.
 */
import * as assert from 'node:assert/strict';
import { behaviourGroup } from '../helpers/behaviours';
import {
  createFencingTeam,
  refusedByClient,
  refusedByServer,
  type CliResult,
  type FencingTeam,
  type FencingTeamOptions,
  type TeamMember,
} from '../helpers/fencingFixture';
import { scaled, scaledSeconds } from '../helpers/calibration';
import { expectError, expectOk } from '../helpers/gitFixture';
import { waitFor } from '../helpers/waitFor';

/** The queue head's window: the few CLI calls of the handover step must fit in it. */
const WINDOW_SECONDS = scaledSeconds(10);
/** How long a lapsing holder stays live: the calls made while it is live must fit (at most 50 s: a lease is 60 s). */
const LAPSE_MS = Math.min(scaled(4_000), 50_000);
const OPERATOR = 'ops@example.com';

export type ContainerSetUp = Pick<FencingTeamOptions, 'initArgs' | 'env' | 'beforeInit'> & {
  /** The driver `lockstep status` must report for this container. */
  readonly driver: string;
};

export function describeContainerContract(label: string, setUp: (context: Mocha.Context) => Promise<ContainerSetUp>): void {
  describe(`container contract: ${label}`, function () {
    behaviourGroup(this, 'container contract');
    this.timeout(180_000);
    let team: FencingTeam;
    let alice: TeamMember, bob: TeamMember, carol: TeamMember;
    let driver: string;
    const push = (who: TeamMember, ...extra: string[]) => team.git(who.dir, ['push', ...extra, 'origin', 'HEAD:refs/heads/main']);
    const status = async (who: TeamMember) => expectOk(await team.lockstep(who.dir, ['status']), `status of ${who.name}`);
    const landed = (result: CliResult, what: string) => assert.equal(result.code, 0, `${what}: ${result.stderr}`);
    const cli = (who: TeamMember, ...args: string[]) => team.lockstep(who.dir, args);
    /** The operator has no clone of their own: they run lockstep in carol's under their identity. */
    const operator = (...args: string[]) => team.lockstep(carol.dir, args, { env: { LOCKSTEP_IDENTITY: OPERATOR } });
    const untilState = (who: TeamMember, state: string, description: string) =>
      waitFor(
        async () => {
          const seen = await status(who);
          return seen.state === state ? seen : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 250, description },
      );

    before(async function () {
      const { driver: expected, ...options } = await setUp(this);
      driver = expected;
      team = await createFencingTeam({
        members: ['alice', 'bob', 'carol'],
        operators: [OPERATOR],
        settings: { windowSeconds: WINDOW_SECONDS },
        ...options,
      });
      [alice, bob, carol] = team.members;
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

    it("bob's push to the protected branch is refused by his pre-push guard, and with --no-verify by the remote's guard", async () => {
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

    it('the holder leases identifiers to a queued coworker, who mints from her range while the holder mints from the pool; no one else may', async () => {
      assert.equal(expectOk(await cli(alice, 'petition'), 'petition').position, 1);
      assert.equal(expectOk(await cli(carol, 'petition'), 'petition').position, 2);
      const leased = expectOk(await cli(bob, 'lease-ids', '--to', alice.identity, '--count', '3'), 'lease-ids');
      assert.deepEqual([leased.to, leased.count, leased.spans], [alice.identity, 3, [{ start: 1, end: 3 }]]);
      expectError(await cli(alice, 'lease-ids', '--to', carol.identity, '--count', '1'), 1, 'refused', 'not-holder');
      assert.equal(expectOk(await cli(alice, 'next-id'), 'next-id').id, 1);
      assert.equal(expectOk(await cli(bob, 'next-id'), 'next-id').id, 4);
      expectError(await cli(carol, 'next-id'), 1, 'refused', 'no-range');
      assert.deepEqual(
        (await status(carol)).ranges.map((r: { to: string }) => r.to),
        [alice.identity],
      );
    });

    it("release reclaims the never-minted identifiers and opens the head's window: only alice may acquire in it; past it carol may", async () => {
      const released = expectOk(await cli(bob, 'release'), 'release');
      assert.deepEqual([released.grant, released.reclaimed, released.next], [2, 2, alice.identity]);
      const carols = await status(carol);
      assert.deepEqual([carols.state, carols.turn.identity, carols.canAcquire], ['queued', alice.identity, false]);
      expectError(await cli(carol, 'acquire'), 3, 'busy');
      expectError(await cli(bob, 'acquire'), 3, 'busy');
      assert.equal((await status(alice)).state, 'your-turn');
      assert.ok(Date.now() < carols.turn.endsAt, "the checks above ran inside alice's window (machine too slow otherwise)");
      const turn = await waitFor(
        async () => {
          const seen = await status(carol);
          return seen.canAcquire ? seen : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 250, description: "carol's turn after alice's window" },
      );
      assert.deepEqual([turn.state, turn.turn.identity], ['your-turn', carol.identity]);
      assert.equal(expectOk(await cli(carol, 'acquire'), "acquire past the head's window").grant, 3);
      const after = await status(bob);
      assert.deepEqual(after.ranges, [], 'the ranges of grant #2 are gone');
      assert.deepEqual(
        after.queue.map((p: { identity: string }) => p.identity),
        [alice.identity],
        'alice, who let her window pass, still waits',
      );
    });

    it("operator clear: refused while the holder is live; on HOLDER SILENT it is done and audited with its reason, the leased identifiers return, and the cleared clone's heartbeat fails", async () => {
      assert.equal(expectOk(await cli(carol, 'release'), 'release').next, alice.identity);
      assert.equal(expectOk(await cli(bob, 'petition'), 'petition').position, 2);
      const alices = await team.lapsingGrant(alice.dir, LAPSE_MS);
      assert.equal(alices.grant, 4);
      assert.equal(expectOk(await cli(alice, 'lease-ids', '--to', bob.identity, '--count', '2'), 'lease-ids').count, 2);
      assert.deepEqual(
        (await status(bob)).ranges.map((r: { to: string }) => r.to),
        [bob.identity],
      );
      expectError(await operator('clear', '--reason', 'too early'), 1, 'refused', 'not-silent');
      assert.ok(Date.now() < alices.expiresAt, 'the lease and the early clear ran while alice was live (machine too slow otherwise)');

      await untilState(carol, 'holder-silent', "HOLDER SILENT (alice's lapsing lease)");
      expectError(await cli(carol, 'clear', '--reason', 'impatient'), 1, 'refused', 'not-operator');
      const cleared = expectOk(await operator('clear', '--reason', 'alice went silent'), 'clear');
      assert.deepEqual([cleared.clearedGrant, cleared.queueHead], [4, bob.identity]);
      // Read at once: the queue head's turn lasts one window (10 s scaled), which the checks below may outlast on a busy machine.
      const bobs = await status(bob);
      assert.deepEqual([bobs.holder, bobs.ranges, bobs.turn?.identity], [null, [], bob.identity]);
      const audit = expectOk(await cli(bob, 'audit'), 'audit').audit as {
        action: string;
        who: string;
        grant: number;
        outcome: string;
        detail?: string;
      }[];
      assert.deepEqual(audit.at(-1), {
        ...audit.at(-1),
        action: 'clear',
        who: OPERATOR,
        grant: 4,
        outcome: 'done',
        detail: `cleared ${alice.identity} (reclaimed 2 unused identifiers): alice went silent`,
      });

      const alicesView = await status(alice);
      assert.deepEqual([alicesView.state, alicesView.staleGrant], ['stale', 4], 'the cleared clone knows it no longer holds');
      expectError(await cli(alice, 'heartbeat'), 1, 'lease-lost');
    });

    it("a takeover: the silent holder's heartbeat fails (lease lost) and never revives it, its release too; the grant counter survived the clear", async () => {
      assert.equal(expectOk(await cli(carol, 'petition'), 'petition').position, 2);
      const bobs = await team.lapsingGrant(bob.dir, LAPSE_MS);
      assert.equal(bobs.grant, 5, 'the grant after a clear is the cleared one + 1');
      await untilState(carol, 'holder-silent', "HOLDER SILENT (bob's lapsing lease)");
      const taken = expectOk(await cli(carol, 'acquire'), 'takeover by the head');
      assert.equal(taken.grant, 6);

      const stale = await status(bob);
      assert.deepEqual([stale.state, stale.staleGrant, stale.grant], ['stale', 5, 6]);
      const lost = expectError(await cli(bob, 'heartbeat'), 1, 'lease-lost');
      assert.match(lost.message, /grant #6 was issued since/);
      expectError(await cli(bob, 'heartbeat'), 1, 'lease-lost');
      expectError(await cli(bob, 'release'), 1, 'lease-lost');
      assert.equal((await status(bob)).state, 'stale', 'a failed heartbeat revives nothing');
      expectOk(await cli(carol, 'heartbeat'), "the live holder's heartbeat");
      assert.equal((await status(carol)).state, 'held-by-me');
      const audit = expectOk(await cli(carol, 'audit'), 'audit').audit as { action: string; who: string; grant: number; detail?: string }[];
      const line = audit.filter(l => l.action === 'acquire').at(-1)!;
      assert.deepEqual([line.who, line.grant], [carol.identity, 6]);
      assert.ok(line.detail?.startsWith(`took over from ${bob.identity} (grant #5, silent since `), line.detail);
    });

    it('no owner token or push proof appeared in anything printed', () => {
      team.assertNoSecretLeaked();
    });
  });
}
