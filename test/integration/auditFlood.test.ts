import * as assert from 'node:assert/strict';
import { createFencingTeam, type CliResult, type FencingTeam, type TeamMember } from '../helpers/fencingFixture';
import { waitFor } from '../helpers/waitFor';

/**
 * Issue #24, item 8: the server guard audits every refused push on the page (file, SQL and Redis
 * keep no other history) as "unknown pusher", with the grant the push presented. Those lines used
 * to fold only when identical: 505 pushes presenting varying `lockstep-grant` values pushed every
 * real line off the page. Here 60 of them (LOCKSTEP_TEST_FLOOD=600 for the full flood, about 6 minutes;
 * test/unit/record.page.test.ts floods the pure rule with 600) go through the real guard behind `git daemon` (the hook
 * in the daemon's own environment, the file store pinned at install), and the page still shows the
 * acquire, the release and the operator's clear; the refusals are one folded line. The control: the
 * holder lands, and the team's day goes on after the flood.
 */
describe('the audit cannot be flooded by refused pushes (server guard behind git daemon, file driver)', function () {
  this.timeout(1_800_000);
  // 60 already fails on the old rule (60 lines, one per presented grant, where the page keeps one).
  const FLOOD = Number(process.env.LOCKSTEP_TEST_FLOOD ?? 60);
  const OPS = 'ops@example.com';
  let team: FencingTeam;
  let alice: TeamMember, bob: TeamMember, eve: TeamMember;

  const ok = (result: CliResult, what: string): any => {
    assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
    return result.json;
  };
  const audit = async (who: TeamMember) =>
    ok(await team.lockstep(who.dir, ['audit']), 'audit').audit as {
      at: number;
      who: string;
      action: string;
      outcome: string;
      grant: number;
      count?: number;
      since?: number;
      detail?: string;
    }[];

  before(async () => {
    team = await createFencingTeam({ members: ['alice', 'bob', 'eve'], operators: [OPS], transport: 'daemon' });
    [alice, bob, eve] = team.members;
  });
  after(() => team?.dispose());

  it(`${FLOOD} refused pushes presenting ${FLOOD} different grants leave the acquire, release and clear lines on the page`, async () => {
    // The real history: alice acquires, lands and releases; bob acquires and goes silent; the operator clears.
    ok(await team.lockstep(alice.dir, ['acquire']), 'alice acquires');
    const landed = await team.commit(alice, 'alice.txt');
    ok(await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']), 'alice lands (the control)');
    assert.equal(team.remoteSha(), landed);
    ok(await team.lockstep(alice.dir, ['release']), 'alice releases');
    // The shortest lease (60 s) dated so that it runs out 2 s from now (lapsingGrant.ts).
    const bobs = await team.lapsingGrant(bob.dir, 2_000);
    await waitFor(
      async () => (await team.lockstep(alice.dir, ['clear', '--reason', 'bob went quiet'], { env: { LOCKSTEP_IDENTITY: OPS } })).code === 0,
      { timeoutMs: 120_000, intervalMs: 500, description: "bob's lease to lapse and the operator to clear it" },
    );
    const real = await audit(alice);
    const line = (action: string, who: string) => real.find(l => l.action === action && l.who === who && l.outcome === 'done');
    for (const [action, who] of [
      ['acquire', alice.identity],
      ['release', alice.identity],
      ['acquire', bob.identity],
      ['clear', OPS],
    ] as const) {
      assert.ok(line(action, who), `${action} by ${who} is on the page before the flood`);
    }
    assert.ok(bobs.grant > 0);

    // The flood: eve pushes to main past her own hook, each time presenting another grant and proof,
    // four pushes at a time (one at a time took 16 minutes on a loaded machine).
    await team.gitOk(eve.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
    await team.commit(eve, 'eve.txt');
    const hex = (i: number) => i.toString(16).padStart(64, '0');
    let next = 0;
    const pusher = async () => {
      for (let i = next++; i < FLOOD; i = next++) {
        const pushed = await team.git(eve.dir, [
          'push',
          '--no-verify',
          '-o',
          `lockstep-grant=${1000 + i}`,
          '-o',
          `lockstep-proof=${hex(i)}`,
          'origin',
          'HEAD:refs/heads/main',
        ]);
        assert.notEqual(pushed.code, 0, `push ${i} must be refused`);
        assert.match(pushed.stderr, /pre-receive hook declined/, `push ${i}`);
      }
    };
    await Promise.all([pusher(), pusher(), pusher(), pusher()]);
    assert.equal(team.remoteSha(), landed, 'main did not move');

    const after = await audit(alice);
    for (const l of real)
      assert.ok(
        after.some(a => a.action === l.action && a.who === l.who && a.at === l.at && a.outcome === l.outcome),
        `${l.action} by ${l.who} is still on the page`,
      );
    const refusals = after.filter(l => l.action === 'push' && l.outcome === 'refused');
    assert.equal(refusals.length, 1, 'one folded line for the one (unknown) pusher');
    assert.equal(refusals[0].who, 'unknown pusher');
    // The guard audits best effort (a few compare-and-swap attempts): concurrent refusals may lose a line
    // to a collision, never the page's real lines. Most of them are in the one folded line.
    assert.ok(refusals[0].count! > FLOOD / 2 && refusals[0].count! <= FLOOD, `count ${refusals[0].count}`);
    assert.ok(refusals[0].grant >= 1000 && refusals[0].grant < 1000 + FLOOD, 'a presented grant (the latest audited)');
    assert.ok(refusals[0].since !== undefined && refusals[0].since <= refusals[0].at);
    const human = await team.lockstep(alice.dir, ['audit'], { json: false });
    assert.match(human.stdout, new RegExp(`unknown pusher  push \\(refused\\) ×${refusals[0].count} since `));

    // The team's day goes on: alice acquires again and lands.
    ok(await team.lockstep(alice.dir, ['acquire']), 'alice acquires after the flood');
    await team.gitOk(alice.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
    const again = await team.commit(alice, 'alice2.txt');
    ok(await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']), 'alice lands after the flood');
    assert.equal(team.remoteSha(), again);
    team.assertNoSecretLeaked();
  });
});
