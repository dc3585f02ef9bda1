import * as assert from 'node:assert/strict';
import { createGitFixture, sessionModes, type CliResult, type GitFixture } from '../helpers/gitFixture';

/**
 * Eight `lockstep acquire` processes in eight clones (eight identities) at once, against one
 * file-driver store: exactly one wins each grant, the others are told "busy" (exit 3), and grants
 * only go up.
 */
const CONTENDERS = 8;
const ROUNDS = 3;

describe('container lock under contention (8 processes, 8 clones)', function () {
  this.timeout(180_000);
  let team: GitFixture;

  before(async () => {
    const names = Array.from({ length: CONTENDERS }, (_, i) => `dev${i}`);
    team = await createGitFixture({ members: names, operators: ['dev0'] });
  });
  after(() => team?.dispose());

  const sessions = () => team.members.filter(m => team.sessionToken(m) !== undefined);

  it(`${ROUNDS} rounds of ${CONTENDERS} simultaneous acquires: one winner per grant, losers exit 3, grants strictly increasing`, async () => {
    const grants: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const results: CliResult[] = await Promise.all(team.members.map(m => team.cli(m, ['acquire'])));
      const winners = results.map((r, i) => ({ r, who: team.members[i] })).filter(x => x.r.code === 0);
      assert.equal(winners.length, 1, `round ${round}: exit codes ${results.map(r => r.code).join(',')}`);
      for (const r of results) {
        if (r.code === 0) continue;
        assert.equal(r.code, 3, `a loser exits 3 (busy): ${r.stdout}${r.stderr}`);
        assert.equal(r.json.error.code, 'busy');
      }
      const { r: win, who } = winners[0];
      assert.equal(win.json.identity, who.identity);
      grants.push(win.json.grant);

      // Only the winner's clone keeps a session, and it is private.
      assert.deepEqual(sessions().map(m => m.name), [who.name]);
      assert.deepEqual(sessionModes(who), { file: 0o600, dir: 0o700 });
      const seen = await team.cli(team.members[(team.members.indexOf(who) + 1) % CONTENDERS], ['status']);
      assert.equal(seen.json.grant, win.json.grant);
      assert.equal(seen.json.holder.identity, who.identity);

      const released = await team.cli(who, ['release']);
      assert.equal(released.code, 0, released.stdout + released.stderr);
      assert.equal(released.json.grant, win.json.grant);
    }
    assert.deepEqual(grants, Array.from({ length: ROUNDS }, (_, i) => i + 1), 'grant = previous + 1, never repeated');
  });

  it(`${CONTENDERS} processes waiting at once take turns as leases expire: ${CONTENDERS} distinct grants in order`, async () => {
    const first = (await team.cli(team.members[0], ['status'])).json.grant as number;
    // Each winner holds a 1 s lease and never releases: the next waiter takes over when it goes silent.
    const results = await Promise.all(team.members.map(m => team.cli(m, ['acquire', '--ttl', '1', '--wait', '60'], { timeoutMs: 90_000 })));
    for (const r of results) assert.equal(r.code, 0, `every waiter gets its turn: ${r.stdout}${r.stderr}`);
    const byGrant = results.map(r => ({ grant: r.json.grant as number, at: r.json.expiresAt as number, who: r.json.identity as string }))
      .sort((a, b) => a.grant - b.grant);
    assert.deepEqual(byGrant.map(x => x.grant), Array.from({ length: CONTENDERS }, (_, i) => first + 1 + i), 'one grant per process, no gaps, no repeats');
    assert.equal(new Set(byGrant.map(x => x.who)).size, CONTENDERS, 'each identity won once');
    for (let i = 1; i < byGrant.length; i++) {
      // A later grant starts only after the earlier lease expired: its expiry (now + 1 s) comes after the earlier one.
      assert.ok(byGrant[i].at >= byGrant[i - 1].at + 1000, `grant ${byGrant[i].grant} was issued while grant ${byGrant[i - 1].grant} was live`);
    }
    const audit = (await team.cli(team.members[0], ['audit'])).json.audit as { action: string; grant: number; outcome: string }[];
    const acquires = audit.filter(l => l.action === 'acquire').map(l => l.grant);
    assert.deepEqual(acquires, Array.from({ length: acquires.length }, (_, i) => i + 1), 'the audit shows every grant once, in order');
  });

  it('no owner token ever appeared in any output or in the shared store', () => {
    assert.ok(team.tokensSeen.size >= ROUNDS + CONTENDERS, `tokens seen: ${team.tokensSeen.size}`);
    team.assertNoTokenLeaked();
  });
});
