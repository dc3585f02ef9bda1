import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createGitFixture, expectError, expectOk, sessionModes, type GitFixture, type TeamMember } from '../helpers/gitFixture';
import { scaledSeconds } from '../helpers/calibration';
import { waitFor } from '../helpers/waitFor';

/**
 * The container lock through the command line: real `lockstep` processes in four clones of a real
 * git repository (lead, ana, ben and the operator op), sharing one file-driver store. The steps
 * below are one story told in order; each step starts from where the previous one ended.
 *
 * The window is real time that a few CLI calls must fit into: 6 s on an unloaded machine, scaled by the run's
 * slowdown factor (test/helpers/calibration.ts), so that the same calls fit on a busy
 * one (at load ≈ 19 on 2 cores the unscaled 6 s window failed 6 runs of 11).
 */
const WINDOW_SECONDS = scaledSeconds(6);

describe('container lock through the CLI (real processes, real git, file driver)', function () {
  this.timeout(120_000);
  let team: GitFixture;
  let lead: TeamMember, ana: TeamMember, ben: TeamMember, op: TeamMember;
  const status = async (who: TeamMember) => expectOk(await team.cli(who, ['status']), `status of ${who.name}`);

  before(async () => {
    team = await createGitFixture({
      members: ['lead', 'ana', 'ben', 'op'],
      operators: ['op'],
      settings: { windowSeconds: WINDOW_SECONDS },
    });
    [lead, ana, ben, op] = team.members;
  });
  after(() => team?.dispose());

  it('init wrote a committed .lockstep.json that every clone reads; the lock starts free', async () => {
    const file = JSON.parse(fs.readFileSync(path.join(ana.dir, '.lockstep.json'), 'utf8'));
    assert.equal(file.container, team.container);
    assert.deepEqual(file.operators, ['op@example.com']);
    assert.equal(file.windowSeconds, WINDOW_SECONDS);
    const s = await status(ana);
    assert.equal(s.state, 'free');
    assert.equal(s.grant, 0);
    assert.equal(s.identity, 'ana@example.com');
    assert.equal(s.container, team.container);
  });

  it('lead acquires grant #1; the token stays in .git/lockstep/session.json (0600, folder 0700)', async () => {
    const got = expectOk(await team.cli(lead, ['acquire']), 'acquire');
    assert.equal(got.grant, 1);
    assert.equal(got.identity, 'lead@example.com');
    assert.ok(got.expiresAt > Date.now() + 60 * 60 * 1000, 'default 2 h lease');
    assert.match(team.sessionToken(lead) ?? '', /^[0-9a-f]{64}$/);
    assert.deepEqual(sessionModes(lead), { file: 0o600, dir: 0o700 });
    assert.equal((await status(lead)).state, 'held-by-me');
    const seen = await status(ana);
    assert.equal(seen.state, 'held-by-other');
    assert.equal(seen.holder.identity, 'lead@example.com');
  });

  it('others are busy (exit 3); they petition in order; duplicates and the holder are refused', async () => {
    expectError(await team.cli(ana, ['acquire']), 3, 'busy');
    const leadToken = team.sessionToken(lead);
    // Acquiring again in the clone that holds the lock changes nothing, and says so (exit 0).
    const again = expectOk(await team.cli(lead, ['acquire']), 'acquire again in the holding clone');
    assert.equal(again.already, true);
    assert.equal(again.grant, 1);
    assert.equal(team.sessionToken(lead), leadToken, 'the session (and its token) is kept');
    assert.equal(expectOk(await team.cli(ana, ['petition', '--note', 'chapter 2']), 'petition').position, 1);
    assert.equal(expectOk(await team.cli(ben, ['petition']), 'petition').position, 2);
    expectError(await team.cli(ana, ['petition']), 1, 'refused', 'already-queued');
    expectError(await team.cli(lead, ['petition']), 1, 'refused', 'holder-cannot-petition');
    const s = await status(ben);
    assert.equal(s.state, 'queued');
    assert.equal(s.position, 2);
    assert.deepEqual(
      s.queue.map((p: { identity: string }) => p.identity),
      ['ana@example.com', 'ben@example.com'],
    );
    const human = await team.cli(ben, ['status'], { json: false });
    assert.match(human.stdout, /Queued — position 2 of 2; held by lead@example\.com \(grant #1\)/);
  });

  it('the lead leases identifiers; ana mints from her range, the lead from the pool', async () => {
    assert.deepEqual(expectOk(await team.cli(lead, ['lease-ids', '--to', ana.identity, '--count', '3']), 'lease-ids'), {
      ok: true,
      to: ana.identity,
      count: 3,
      spans: [{ start: 1, end: 3 }],
      contiguous: true,
      start: 1,
      end: 3,
    });
    expectError(await team.cli(ana, ['lease-ids', '--to', ben.identity, '--count', '3']), 1, 'refused', 'not-holder');
    assert.equal(expectOk(await team.cli(ana, ['next-id']), 'next-id').id, 1);
    assert.equal(expectOk(await team.cli(lead, ['next-id']), 'next-id').id, 4);
    expectError(await team.cli(ben, ['next-id']), 1, 'refused', 'no-range');
  });

  it('release is refused (exit 1) while work is uncommitted, then while it is unpushed, and says which', async () => {
    fs.appendFileSync(path.join(lead.dir, 'README.md'), 'lead was here\n');
    const dirty = expectError(await team.cli(lead, ['release']), 1, 'refused', 'not-landed');
    assert.match(dirty.message, /uncommitted changes to README\.md/);
    team.git(lead, 'commit', '--quiet', '-am', 'lead work');
    const unpushed = expectError(await team.cli(lead, ['release']), 1, 'refused', 'not-landed');
    assert.match(unpushed.message, /1 commit not on origin\/main/);
    const human = await team.cli(lead, ['release'], { json: false });
    assert.equal(human.code, 1);
    assert.match(human.stderr, /1 commit not on origin\/main/);
    assert.equal((await status(lead)).state, 'held-by-me', 'a refused release keeps the lock');
  });

  it('after a push the release succeeds, reclaims the unused identifiers and hands over to the queue head', async () => {
    team.git(lead, 'push', '--quiet', 'origin', 'main');
    const released = expectOk(await team.cli(lead, ['release']), 'release');
    const landed = team.git(lead, 'rev-parse', '--short=12', 'origin/main').trim();
    assert.deepEqual(released, { ok: true, grant: 1, reclaimed: 2, next: ana.identity, landed, pushed: false });
    assert.equal(team.sessionToken(lead), undefined, 'release removes the session');
    // ana's window: ben (second) and lead (not queued) must wait.
    const bens = await status(ben);
    assert.deepEqual(bens.turn.identity, ana.identity);
    expectError(await team.cli(ben, ['acquire']), 3, 'busy');
    expectError(await team.cli(lead, ['acquire']), 3, 'busy');
    assert.equal((await status(ana)).state, 'your-turn');
    assert.ok(Date.now() < bens.turn.endsAt, "the checks above ran inside ana's window (machine too slow otherwise)");
    const got = expectOk(await team.cli(ana, ['acquire']), 'acquire by the head');
    assert.equal(got.grant, 2);
    const after = await status(ben);
    assert.deepEqual(
      after.queue.map((p: { identity: string }) => p.identity),
      [ben.identity],
      "acquiring removed ana's petition",
    );
    assert.deepEqual(after.ranges, [], 'the ranges of grant #1 are gone');
  });

  it('when the head lets its window pass, the next waiter may acquire', async () => {
    expectOk(await team.cli(lead, ['petition']), 'petition'); // queue: ben, lead
    assert.equal(expectOk(await team.cli(ana, ['release']), 'release').next, ben.identity);
    const waiting = await status(lead);
    assert.equal(waiting.state, 'queued');
    assert.equal(waiting.turn.identity, ben.identity);
    expectError(await team.cli(lead, ['acquire']), 3, 'busy');
    assert.ok(Date.now() < waiting.turn.endsAt, "the refusal ran inside ben's window (machine too slow otherwise)");
    const mine = await waitFor(
      async () => {
        const s = await status(lead);
        return s.canAcquire ? s : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, description: "the lead's turn after ben's window" },
    );
    assert.equal(mine.state, 'your-turn');
    assert.equal(mine.turn.identity, lead.identity);
    // The shortest lease (the container's 60 s), so that it goes silent for the next step. It cannot be dated back
    // (lapsingGrant.ts): before this moment it was ben's turn, so the next step waits for its full minute.
    const got = expectOk(await team.cli(lead, ['acquire', '--ttl', '60']), 'acquire by the second waiter');
    assert.equal(got.grant, 3);
  });

  it("the silent holder's grant goes stale once the head takes over; its heartbeat fails and never revives it", async () => {
    const silent = await waitFor(
      async () => {
        const s = await status(ana);
        return s.state === 'holder-silent' ? s : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500, description: "HOLDER SILENT (the lead's 60 s lease)" },
    );
    assert.equal(silent.holder.identity, lead.identity);
    assert.equal(silent.turn.identity, ben.identity);
    // The head sees HOLDER SILENT too (seed 001's worked example), and that it may take over.
    const head = await status(ben);
    assert.equal(head.state, 'holder-silent');
    assert.equal(head.canAcquire, true);
    assert.equal(head.turn.identity, ben.identity);
    // A takeover is dated when the lead's silence began at the earliest: ben's shortest lease lasts its full 60 s.
    const bens = expectOk(await team.cli(ben, ['acquire', '--ttl', '60']), 'acquire');
    assert.equal(bens.grant, 4);
    // The operator may not clear a live lock (ben's lease runs for 60 s).
    expectError(await team.cli(op, ['clear', '--reason', 'too early']), 1, 'refused', 'not-silent');
    assert.ok(Date.now() < bens.expiresAt, "the clear was tried while ben's lease was live (machine too slow otherwise)");

    const stale = await status(lead);
    assert.equal(stale.state, 'stale');
    assert.equal(stale.staleGrant, 3);
    assert.equal(stale.grant, 4);
    const human = await team.cli(lead, ['status'], { json: false });
    assert.match(
      human.stdout,
      /Stale grant — your lease #3 has ended: grant #4 was issued to ben@example\.com at \d\d:\d\d \S+\. Pushes from this clone are blocked; ben@example\.com holds grant #4\./,
    );
    assert.doesNotMatch(human.stdout, /below or past|Fetch/);
    const lost = expectError(await team.cli(lead, ['heartbeat']), 1, 'lease-lost');
    assert.match(lost.message, /grant #4 was issued since/);
    expectError(await team.cli(lead, ['heartbeat']), 1, 'lease-lost');
    expectError(await team.cli(lead, ['release']), 1, 'lease-lost');
    assert.equal((await status(ben)).state, 'held-by-me');
  });

  it('operator clear: refused for a non-operator and without a reason; done on HOLDER SILENT', async () => {
    expectError(await team.cli(ana, ['clear', '--reason', 'impatient']), 1, 'refused', 'not-operator');
    // Without --reason the attempt still reaches the page and is audited (folded with the next, identical one).
    expectError(await team.cli(op, ['clear']), 1, 'refused', 'reason-required');
    expectError(await team.cli(op, ['clear', '--reason', '   ']), 1, 'refused', 'reason-required');
    await waitFor(async () => (await status(op)).state === 'holder-silent', {
      timeoutMs: 90_000,
      intervalMs: 500,
      description: 'ben silent (his 60 s lease)',
    });
    expectError(await team.cli(ana, ['clear', '--reason', 'impatient']), 1, 'refused', 'not-operator');
    const cleared = expectOk(await team.cli(op, ['clear', '--reason', "ben's laptop died"]), 'clear');
    assert.equal(cleared.clearedGrant, 4);

    const bens = await status(ben);
    assert.equal(bens.state, 'stale', 'the cleared grant is stale in its clone');
    assert.equal(bens.staleGrant, 4);
    expectError(await team.cli(ben, ['heartbeat']), 1, 'lease-lost');
    assert.equal((await status(ana)).state, 'free');
    assert.equal(expectOk(await team.cli(ana, ['acquire']), 'acquire after clear').grant, 5, 'the grant counter survives a clear');
    expectOk(await team.cli(ana, ['release']), 'release');
  });

  it('audit lists every transition and every clear attempt, oldest first', async () => {
    const audit = expectOk(await team.cli(op, ['audit']), 'audit').audit as {
      action: string;
      who: string;
      grant: number;
      outcome: string;
      detail?: string;
    }[];
    const short = (l: (typeof audit)[number]) => `${l.action}${l.outcome === 'refused' ? '!' : ''} ${l.who.split('@')[0]} #${l.grant}`;
    assert.deepEqual(audit.map(short), [
      'init seed #0',
      'acquire lead #1',
      'petition ana #1',
      'petition ben #1',
      'lease-ids lead #1',
      'next-id ana #1',
      'next-id lead #1',
      'release lead #1',
      'acquire ana #2',
      'petition lead #2',
      'release ana #2',
      'acquire lead #3',
      'acquire ben #4',
      // Refused attempts fold per person and action, wherever they are (docs/protocol.md#the-audit-trail).
      'clear! op #4',
      'clear! ana #4',
      'clear op #4',
      'acquire ana #5',
      'release ana #5',
    ]);
    assert.deepEqual(
      audit.filter(l => l.action === 'clear' && l.who === op.identity && l.outcome === 'refused').map(l => (l as { count?: number }).count),
      [3],
      'the attempt on a live lock and both attempts without a reason: one line, count 3',
    );
    assert.deepEqual(
      audit
        .filter(l => l.action === 'clear' && l.who === ana.identity && l.outcome === 'refused')
        .map(l => (l as { count?: number }).count),
      [2],
    );
    const clear = audit.find(l => l.action === 'clear' && l.outcome === 'done')!;
    assert.equal(clear.detail, "cleared ben@example.com: ben's laptop died");
    const human = await team.cli(op, ['audit'], { json: false });
    assert.equal(human.code, 0);
    assert.match(human.stdout, /#4 {2}ana@example\.com {2}clear \(refused\) ×2 since [^\n]* — impatient/);
    assert.match(human.stdout, /#4 {2}op@example\.com {2}clear — cleared ben@example\.com: ben's laptop died/);
    assert.equal(human.stdout.trim().split('\n').length, audit.length);
  });

  it('no owner token ever appeared in any output or in the shared store', () => {
    assert.ok(team.tokensSeen.size >= 5, `tokens seen: ${team.tokensSeen.size}`);
    team.assertNoTokenLeaked();
  });
});
