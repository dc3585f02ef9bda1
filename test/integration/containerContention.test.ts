import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Clock, systemClock } from '../../src/core/clock';
import { Container } from '../../src/core/container/container';
import { scaled } from '../helpers/calibration';
import { childEnv, finished, spawnTs } from '../helpers/children';
import type { StormResult } from '../helpers/petitionStorm';
import { waitFor } from '../helpers/waitFor';
import { createGitFixture, sessionModes, type CliResult, type GitFixture } from '../helpers/gitFixture';

/**
 * Eight `lockstep acquire` processes in eight clones (eight identities) at once, against one
 * file-driver store: exactly one wins each grant, the others are told "busy" (exit 3), and grants
 * only go up.
 */
const CONTENDERS = 8;
const ROUNDS = 3;
/** How long each waiter of the lapse test waits: past the 2 s lapse, well short of the winner's 60 s. */
const WAIT_SECONDS = 20;

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
      assert.deepEqual(
        sessions().map(m => m.name),
        [who.name],
      );
      assert.deepEqual(sessionModes(who), { file: 0o600, dir: 0o700 });
      const seen = await team.cli(team.members[(team.members.indexOf(who) + 1) % CONTENDERS], ['status']);
      assert.equal(seen.json.grant, win.json.grant);
      assert.equal(seen.json.holder.identity, who.identity);

      const released = await team.cli(who, ['release']);
      assert.equal(released.code, 0, released.stdout + released.stderr);
      assert.equal(released.json.grant, win.json.grant);
    }
    assert.deepEqual(
      grants,
      Array.from({ length: ROUNDS }, (_, i) => i + 1),
      'grant = previous + 1, never repeated',
    );
  });

  it(`${CONTENDERS - 1} processes waiting at once when a lease lapses: exactly one takes over (the next grant, after the lapse), the rest stay busy (exit 3)`, async () => {
    // A grant lasts at least the container's 60 s, and a takeover of a silent holder cannot be dated before its silence,
    // so turns by expiry are a minute apart: one lapse is watched here, not a chain of them. The holder's lease is the
    // shortest, dated so that it runs out 2 s from now (lapsingGrant.ts); each waiter asks for 60 s and waits up to 20 s.
    const [holder, ...waiters] = team.members;
    const lapsing = await team.lapsingGrant(holder, 2_000);
    const results = await Promise.all(
      waiters.map(m => team.cli(m, ['acquire', '--ttl', '60', '--wait', String(WAIT_SECONDS)], { timeoutMs: 90_000 })),
    );
    const winners = results.map((r, i) => ({ r, who: waiters[i] })).filter(x => x.r.code === 0);
    assert.equal(winners.length, 1, `exactly one waiter takes over: exit codes ${results.map(r => r.code).join(',')}`);
    for (const r of results) {
      if (r.code === 0) continue;
      assert.equal(r.code, 3, `a waiter still busy when its wait ran out exits 3: ${r.stdout}${r.stderr}`);
      assert.equal(r.json.error.code, 'busy');
    }
    const { r: win, who } = winners[0];
    assert.equal(win.json.grant, lapsing.grant + 1, 'the takeover is the next grant, no gaps, no repeats');
    assert.equal(win.json.identity, who.identity);
    const held = (await team.cli(holder, ['status'])).json;
    assert.equal(held.holder.identity, who.identity);
    assert.ok(held.holder.grantedAt >= lapsing.expiresAt, `grant ${win.json.grant} was issued while grant ${lapsing.grant} was live`);
    assert.equal(held.holder.expiresAt - held.holder.grantedAt, 60_000, 'the takeover keeps the 60 s it asked for');
    const audit = (await team.cli(team.members[0], ['audit'])).json.audit as { action: string; grant: number; outcome: string }[];
    const acquires = audit.filter(l => l.action === 'acquire').map(l => l.grant);
    assert.deepEqual(
      acquires,
      Array.from({ length: acquires.length }, (_, i) => i + 1),
      'the audit shows every grant once, in order',
    );
  });

  it('no owner token ever appeared in any output or in the shared store', () => {
    assert.ok(team.tokensSeen.size >= ROUNDS + 2, `tokens seen: ${team.tokensSeen.size}`);
    team.assertNoTokenLeaked();
  });
});

/**
 * Issue 30's fifty clones at once, on the file driver: while other clones' processes petition and withdraw as
 * fast as they can, the holder's heartbeats keep landing, and a heartbeat that lost a compare-and-swap race to
 * them reads and writes again at once, where the petitions back off (casBackoff.ts). The pauses are the ones the
 * holder's container asked its clock for, one per lost race: behaviour, not timing.
 */
describe('the holder’s precedence while petitions storm (6 processes, 6 clones, file driver)', function () {
  this.timeout(180_000);
  const STORMERS = 6;
  /** Heartbeats that lost at least one race before they landed: enough to show the rule, not left to one chance. */
  const RACED = 5;

  it(`every heartbeat lands; after its first lost race the holder retries at once (${RACED} raced heartbeats)`, async () => {
    const stormers = Array.from({ length: STORMERS }, (_, i) => `storm${i}`);
    const team = await createGitFixture({ members: ['holder', ...stormers], operators: [] });
    try {
      const stop = path.join(team.store, '..', 'stop-storm');
      /** Written by a stormer once its first write landed: on a loaded machine one may start after the heartbeats are done. */
      const ready = (name: string) => path.join(team.store, '..', `ready-${name}`);
      const env = { LOCKSTEP_PATH: team.store };
      let pauses: number[] | undefined;
      const clock: Clock = {
        ...systemClock,
        sleep: (ms, signal) => {
          pauses?.push(ms);
          return systemClock.sleep(ms, signal);
        },
      };
      const holder = await Container.open({ cwd: team.member('holder').dir, env, clock });
      const children = stormers.map(name =>
        finished(
          spawnTs('test/helpers/petitionStorm.ts', ['--cwd', team.member(name).dir, '--stop', stop, '--ready', ready(name)], childEnv(env)),
          scaled(120_000),
        ),
      );
      try {
        await holder.acquire();
        /** Per heartbeat that lost a race: the pauses its retries took, one per lost race. */
        const raced: number[][] = [];
        let heartbeats = 0;
        await waitFor(
          async () => {
            pauses = [];
            await holder.heartbeat();
            heartbeats++;
            if (pauses.length > 0) raced.push(pauses);
            return raced.length >= RACED;
          },
          { timeoutMs: 90_000, intervalMs: 0, description: `${RACED} heartbeats that lost a race to the petitions` },
        );
        for (const [i, taken] of raced.entries()) {
          assert.equal(
            taken[0],
            0,
            `raced heartbeat ${i + 1} of ${heartbeats} read and wrote again at once: pauses ${taken.join(', ')} ms`,
          );
        }
        await waitFor(() => stormers.every(name => fs.existsSync(ready(name))), {
          timeoutMs: 60_000,
          description: 'every stormer landed its first write',
        });
      } finally {
        fs.writeFileSync(stop, '');
        await holder.close();
      }
      const storms = (await Promise.all(children)).map(child => {
        assert.equal(child.code, 0, child.stderr);
        return JSON.parse(child.stdout) as StormResult;
      });
      for (const storm of storms) {
        assert.ok(storm.writes > 0, 'each stormer petitioned');
        assert.deepEqual(storm.errors, [], 'every petition and withdrawal landed');
      }
    } finally {
      team.dispose();
    }
  });
});
