import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createGitFixture, type CliResult, type GitFixture, type TeamMember } from '../helpers/gitFixture';
import { walk } from '../helpers/tempDir';

/**
 * Seed 001's first rule, through real `lockstep` processes on real clones: one lock page per
 * container. `init` creates the page and commits where it is; a clone whose environment points at
 * another store, prefix or driver is refused before it opens anything (exit 5) — it never reads an
 * empty store as Free, never issues its own grant #1 and never adopts a second page.
 */

function ok(result: CliResult, what: string): any {
  assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
  return result.json;
}

/** Each command reads the page as set back (exit 5, tampered), naming the grant it reads and the higher one the clone saw. */
async function assertSetBack(team: GitFixture, runs: [TeamMember, string[]][], grant: number, seen: number): Promise<void> {
  for (const [who, args] of runs) {
    const result = await team.cli(who, args);
    assert.equal(result.code, 5, `${who.name} ${args.join(' ')}: ${result.stdout}${result.stderr}`);
    assert.equal(result.json.error.reason, 'tampered');
    assert.match(
      result.json.error.message,
      new RegExp(`The lock page was set back: the page reads grant #${grant}, but this clone has already seen grant #${seen} on it`),
    );
    assert.match(result.json.error.message, new RegExp(`lockstep adopt --grant ${seen}\\b`));
  }
}

/**
 * Exit 5, `reason: "no-page"`, for a clone whose environment points at another page than the
 * committed one: the message names the variable and both pages, and nothing was opened.
 */
function pointedAway(
  result: CliResult,
  page: { driver: string; location: string; prefix: string },
  committed: RegExp,
  variable: string,
): void {
  assert.equal(result.code, 5, `expected exit 5, got ${result.code}\n${result.stdout}${result.stderr}`);
  const { error } = result.json;
  assert.equal(error.code, 'storage');
  assert.equal(error.reason, 'no-page');
  assert.deepEqual({ driver: error.page.driver, location: error.page.location, prefix: error.page.prefix }, page);
  assert.deepEqual(error.mismatch, [variable]);
  assert.ok(error.message.startsWith(`${variable} points at another lock page (${page.driver} driver at `), error.message);
  assert.match(error.message, /than the one \.lockstep\.json commits for container [0-9a-f]{8}… \(/);
  assert.match(error.message, committed);
  assert.match(error.message, new RegExp(`Unset ${variable} \\(or make it match \\.lockstep\\.json\\)`));
}

describe('one lock page per container: file driver (real processes, real git)', function () {
  this.timeout(120_000);
  let team: GitFixture;
  let lead: TeamMember;
  let ana: TeamMember;
  let op: TeamMember;

  before(async () => {
    team = await createGitFixture({ members: ['lead', 'ana', 'op'], operators: ['op'] });
    [lead, ana, op] = [team.member('lead'), team.member('ana'), team.member('op')];
  });
  after(() => team?.dispose());

  it('init committed the concrete driver, prefix and path, and created the page there (its first audit line)', async () => {
    const file = JSON.parse(fs.readFileSync(path.join(lead.dir, '.lockstep.json'), 'utf8'));
    assert.deepEqual([file.driver, file.prefix, file.path], ['file', 'lockstep', team.store]);
    const audit = ok(await team.cli(op, ['audit']), 'audit').audit;
    assert.deepEqual(
      audit.map((l: { action: string; who: string }) => [l.action, l.who]),
      [['init', 'seed@example.com']],
    );
  });

  it('status says which page it read, in --json and for people', async () => {
    const status = ok(await team.cli(ana, ['status']), 'status');
    assert.deepEqual(status.page, { driver: 'file', location: team.store, prefix: 'lockstep', container: team.container });
    assert.equal(status.driver, 'file');
    const human = await team.cli(ana, ['status'], { json: false });
    assert.ok(human.stdout.includes(`Page: file driver at ${team.store}, prefix lockstep, container ${team.container}`), human.stdout);
  });

  it('a clone without LOCKSTEP_PATH reads the committed path: the same page', async () => {
    const acquired = ok(await team.cli(lead, ['acquire'], { env: { LOCKSTEP_PATH: undefined } }), 'acquire without LOCKSTEP_PATH');
    assert.equal(acquired.grant, 1);
    assert.equal(ok(await team.cli(ana, ['status']), 'status').holder.identity, lead.identity);
  });

  it('another LOCKSTEP_PATH, another prefix or LOCKSTEP_DRIVER=memory: exit 5, naming the variable, and never a grant', async () => {
    const elsewhere = path.join(team.root, 'elsewhere');
    const committed = new RegExp(`\\(file driver at ${team.store.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, prefix lockstep\\)`);
    for (const args of [['status'], ['acquire'], ['petition'], ['clear', '--reason', 'x']]) {
      pointedAway(
        await team.cli(ana, args, { env: { LOCKSTEP_PATH: elsewhere } }),
        { driver: 'file', location: elsewhere, prefix: 'lockstep' },
        committed,
        'LOCKSTEP_PATH',
      );
    }
    pointedAway(
      await team.cli(ana, ['acquire'], { env: { LOCKSTEP_PREFIX: 'other' } }),
      { driver: 'file', location: team.store, prefix: 'other' },
      committed,
      'LOCKSTEP_PREFIX',
    );
    pointedAway(
      await team.cli(ana, ['acquire'], { env: { LOCKSTEP_DRIVER: 'memory' } }),
      { driver: 'memory', location: "this process's memory", prefix: 'lockstep' },
      committed,
      'LOCKSTEP_DRIVER',
    );
    // The environment may repeat the committed location, with a trailing separator too: that is no mismatch.
    for (const store of [team.store, `${team.store}${path.sep}`]) {
      assert.equal(ok(await team.cli(ana, ['status'], { env: { LOCKSTEP_PREFIX: 'lockstep', LOCKSTEP_PATH: store } }), 'status').grant, 1);
    }
    // Nothing was written anywhere else, and the real page still has one grant, held by the lead.
    assert.deepEqual(fs.existsSync(elsewhere) ? walk(elsewhere).files : [], [], 'no record was written in the wrong store');
    const status = ok(await team.cli(ana, ['status']), 'status');
    assert.deepEqual([status.grant, status.holder.identity], [1, lead.identity]);
    assert.deepEqual(
      ok(await team.cli(op, ['audit']), 'audit').audit.map((l: { action: string }) => l.action),
      ['init', 'acquire'],
    );
    const human = await team.cli(ana, ['status'], { json: false, env: { LOCKSTEP_PATH: elsewhere } });
    assert.equal(human.code, 5);
    assert.match(human.stderr, /LOCKSTEP_PATH points at another lock page/);
  });

  it('adopt with a stray LOCKSTEP_PREFIX or LOCKSTEP_PATH creates no second page: exit 5 while the lead holds #1 on the real one', async () => {
    const elsewhere = path.join(team.root, 'adopt-elsewhere');
    const storeBefore = walk(team.store).files.sort();
    const committed = new RegExp(`\\(file driver at ${team.store.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, prefix lockstep\\)`);
    const adopt = ['adopt', '--reason', 'the page looked lost', '--grant', '0', '--next-id', '1'];
    pointedAway(
      await team.cli(op, adopt, { env: { LOCKSTEP_PREFIX: 'stray' } }),
      { driver: 'file', location: team.store, prefix: 'stray' },
      committed,
      'LOCKSTEP_PREFIX',
    );
    pointedAway(
      await team.cli(op, adopt, { env: { LOCKSTEP_PATH: elsewhere } }),
      { driver: 'file', location: elsewhere, prefix: 'lockstep' },
      committed,
      'LOCKSTEP_PATH',
    );
    // Both at once: both named.
    const both = await team.cli(op, adopt, { env: { LOCKSTEP_PREFIX: 'stray', LOCKSTEP_PATH: elsewhere } });
    assert.equal(both.code, 5);
    assert.deepEqual(both.json.error.mismatch, ['LOCKSTEP_PREFIX', 'LOCKSTEP_PATH']);
    // No page anywhere else, nothing new in the store, and no grant #1 for the operator under the stray prefix.
    assert.equal(fs.existsSync(elsewhere), false, 'no store was created at the stray path');
    assert.deepEqual(walk(team.store).files.sort(), storeBefore, 'no second page in the store');
    pointedAway(
      await team.cli(op, ['acquire'], { env: { LOCKSTEP_PREFIX: 'stray' } }),
      { driver: 'file', location: team.store, prefix: 'stray' },
      committed,
      'LOCKSTEP_PREFIX',
    );
    const status = ok(await team.cli(op, ['status']), 'status');
    assert.deepEqual([status.grant, status.holder.identity], [1, lead.identity]);
  });

  it('a container file that leaves the path out, on a machine without LOCKSTEP_PATH: no page (never Free)', async () => {
    const file = path.join(ana.dir, '.lockstep.json');
    const committed = fs.readFileSync(file, 'utf8');
    try {
      const { path: _, ...rest } = JSON.parse(committed);
      fs.writeFileSync(file, JSON.stringify(rest));
      const result = await team.cli(ana, ['acquire'], { env: { LOCKSTEP_PATH: undefined } });
      assert.equal(result.code, 5);
      assert.equal(result.json.error.reason, 'no-page');
    } finally {
      fs.writeFileSync(file, committed);
    }
  });

  it('"driver": "auto" in .lockstep.json is a configuration error that says what to write', async () => {
    const file = path.join(ana.dir, '.lockstep.json');
    const committed = fs.readFileSync(file, 'utf8');
    try {
      fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(committed), driver: 'auto' }));
      const result = await team.cli(ana, ['status']);
      assert.equal(result.code, 2);
      assert.equal(result.json.error.setting, 'driver');
      assert.match(
        result.json.error.message,
        /"auto", which is not a container driver.*Write the driver it stands for: "redis" .* or "file"/,
      );
    } finally {
      fs.writeFileSync(file, committed);
    }
  });

  it('clear: every attempt reaches the page, a missing reason too; the clear marks the page with caution until the next release', async () => {
    const reasonless = await team.cli(op, ['clear']);
    assert.equal(reasonless.code, 1);
    assert.equal(reasonless.json.error.reason, 'reason-required');
    const audit = ok(await team.cli(op, ['audit']), 'audit').audit;
    assert.deepEqual(audit.at(-1), { ...audit.at(-1), action: 'clear', who: op.identity, outcome: 'refused' });
    // Let the lead's lease lapse: after releasing, acquire again with a lease that runs out in a second (lapsingGrant.ts).
    team.git(lead, 'push', '--quiet', 'origin', 'main');
    ok(await team.cli(lead, ['release']), 'release');
    await team.lapsingGrant(lead, 1_000);
    const deadline = Date.now() + 30_000;
    let cleared: CliResult;
    do {
      cleared = await team.cli(op, ['clear', '--reason', 'lead went silent']);
    } while (cleared.code !== 0 && cleared.json.error.reason === 'not-silent' && Date.now() < deadline);
    const clearedGrant = ok(cleared, 'clear').clearedGrant;
    const marked = ok(await team.cli(ana, ['status']), 'status').caution;
    assert.deepEqual({ ...marked, since: 0 }, { silentGrant: clearedGrant, by: op.identity, since: 0 });
    assert.match(
      (await team.cli(ana, ['status'], { json: false })).stdout,
      new RegExp(`Caution — grant #${clearedGrant} went silent; ${op.identity} cleared or took over`),
    );
    ok(await team.cli(ana, ['acquire']), 'ana acquires after the clear');
    assert.deepEqual(ok(await team.cli(op, ['status']), 'status').caution, marked, 'still marked while ana works');
    // A release with nothing landed does not restore the copy; the next one with a landing does.
    assert.equal(ok(await team.cli(ana, ['release']), 'ana releases with nothing pushed').landed, null);
    assert.deepEqual(ok(await team.cli(op, ['status']), 'status').caution, marked, 'nothing landed: still marked');
    ok(await team.cli(ana, ['acquire']), 'ana acquires again');
    team.git(ana, 'pull', '--quiet', '--ff-only', 'origin', 'main');
    fs.writeFileSync(path.join(ana.dir, 'ana.txt'), 'after the clear\n');
    team.git(ana, 'add', 'ana.txt');
    team.git(ana, 'commit', '--quiet', '-m', 'ana lands after the clear');
    team.git(ana, 'push', '--quiet', 'origin', 'main');
    assert.match(ok(await team.cli(ana, ['release']), 'ana releases after her push').landed, /^[0-9a-f]{12}$/);
    assert.equal(ok(await team.cli(op, ['status']), 'status').caution, null);
  });

  it('lease-ids and assign to an identity the page never saw need --new-identity; blocks outlive the release until done', async () => {
    ok(await team.cli(lead, ['acquire']), 'acquire');
    const typo = await team.cli(lead, ['lease-ids', '--to', 'ana@exmaple.com', '--count', '3']);
    assert.equal(typo.code, 1);
    assert.equal(typo.json.error.reason, 'new-identity');
    assert.equal((await team.cli(lead, ['assign', '--to', 'ana@exmaple.com', '--block', 'x'])).json.error.reason, 'new-identity');
    ok(await team.cli(lead, ['lease-ids', '--to', 'cyd@example.com', '--count', '2', '--new-identity']), 'lease to a new teammate');
    const block = ok(await team.cli(lead, ['assign', '--to', ana.identity, '--block', 'chapter 2']), 'assign').index;
    ok(await team.cli(lead, ['release']), 'release');
    assert.deepEqual(
      ok(await team.cli(ana, ['status']), 'status').blocks.map((b: { id: number }) => b.id),
      [block],
    );
    assert.equal((await team.cli(op, ['done', '--block', String(block)])).json.error.reason, 'not-holder');
    assert.deepEqual(ok(await team.cli(ana, ['done', '--block', String(block)]), 'done'), { ok: true, block, to: ana.identity });
    assert.deepEqual(ok(await team.cli(ana, ['status']), 'status').blocks, []);
    assert.equal(ok(await team.cli(op, ['audit']), 'audit').audit.at(-1).action, 'done');
  });

  it('a lost page stays an error until an operator adopts it; grants continue above the floor', async () => {
    for (const entry of fs.readdirSync(team.store)) fs.rmSync(path.join(team.store, entry), { recursive: true, force: true });
    assert.equal((await team.cli(ana, ['acquire'])).code, 5, 'a wiped store is no free lock');
    const refused = await team.cli(ana, ['adopt', '--reason', 'wiped', '--grant', '9', '--next-id', '100']);
    assert.equal(refused.json.error.reason, 'not-operator');
    const adopted = ok(
      await team.cli(op, ['adopt', '--reason', 'store wiped by a clean-up script', '--grant', '9', '--next-id', '100']),
      'adopt',
    );
    assert.deepEqual([adopted.grant, adopted.nextId, adopted.page.location], [9, 100, team.store]);
    assert.equal(ok(await team.cli(ana, ['acquire']), 'acquire').grant, 10);
    const again = await team.cli(op, ['adopt', '--reason', 'again', '--grant', '1', '--next-id', '1']);
    assert.equal(again.code, 2, 'an existing page is never overwritten');
  });

  it('a page set back to an older copy is no free lock in a clone that read past it: exit 5, no grant twice, repaired by an adopt above it', async () => {
    // Ana holds grant #10 (the test before). A copy of the store now, as a backup taken then would be.
    const backup = path.join(team.root, 'store-backup');
    fs.cpSync(team.store, backup, { recursive: true, verbatimSymlinks: true });
    ok(await team.cli(ana, ['release']), 'ana releases #10');
    assert.equal(ok(await team.cli(op, ['acquire']), 'op acquires').grant, 11);
    assert.equal(ok(await team.cli(lead, ['status']), 'lead reads #11').grant, 11);
    ok(await team.cli(op, ['release']), 'op releases #11');
    // The backup restored: the page reads grant #10 again, held by ana.
    fs.rmSync(team.store, { recursive: true, force: true });
    fs.cpSync(backup, team.store, { recursive: true, verbatimSymlinks: true });
    await assertSetBack(
      team,
      [
        [lead, ['status']],
        [op, ['acquire']],
        [lead, ['acquire']],
      ],
      10,
      11,
    );
    // The repair: the set-back page removed, an adopt whose floor the operator's clone raises to what it has seen.
    fs.rmSync(team.store, { recursive: true, force: true });
    const adopted = ok(
      await team.cli(op, ['adopt', '--reason', 'an old backup was restored', '--grant', '10', '--next-id', '200']),
      'adopt',
    );
    assert.equal(adopted.grant, 11, "the operator's clone saw #11: the new page starts there");
    assert.equal(ok(await team.cli(lead, ['acquire']), 'lead acquires').grant, 12);
  });
});

describe("a page that gives this clone's own grant to another holder (file driver, real processes)", function () {
  this.timeout(120_000);
  let team: GitFixture;
  before(async () => {
    team = await createGitFixture({ members: ['lead', 'ben', 'op'], operators: ['op'] });
  });
  after(() => team?.dispose());

  it("reads as rewritten (exit 5, tampered) in the holder's clone, never as held by another; repaired by an adopt at the grant", async () => {
    const [lead, ben, op] = ['lead', 'ben', 'op'].map(name => team.member(name));
    assert.equal(ok(await team.cli(lead, ['acquire']), 'lead acquires').grant, 1);
    // The store wiped; an operator whose clone never read the page adopts below the lead's grant, and ben takes #1 again.
    fs.rmSync(team.store, { recursive: true, force: true });
    ok(await team.cli(op, ['adopt', '--reason', 'store wiped', '--grant', '0', '--next-id', '1']), 'op adopts at 0');
    assert.equal(ok(await team.cli(ben, ['acquire']), 'ben acquires').grant, 1);
    for (const args of [['status'], ['heartbeat'], ['release']]) {
      const result = await team.cli(lead, args);
      assert.equal(result.code, 5, `lead ${args[0]}: ${result.stdout}${result.stderr}`);
      assert.equal(result.json.error.reason, 'tampered');
      assert.match(
        result.json.error.message,
        /^The lock page was rewritten: the page gives grant #1, which this clone holds, to another holder/,
      );
      assert.match(result.json.error.message, /lockstep adopt --grant 1\b/);
    }
    // The repair the message names: the page removed, an adopt at the lead's grant; the lead's grant is then stale, not another's.
    fs.rmSync(team.store, { recursive: true, force: true });
    ok(await team.cli(op, ['adopt', '--reason', 'grant #1 was issued twice', '--grant', '1', '--next-id', '1']), 'op adopts at 1');
    const status = ok(await team.cli(lead, ['status']), 'lead reads the repaired page');
    assert.deepEqual([status.state, status.staleGrant], ['stale', 1]);
    assert.equal(ok(await team.cli(ben, ['acquire']), 'ben acquires').grant, 2);
  });
});

describe('a grant is pinned to its page: a checkout naming another store with a copy of the page (file driver, real processes)', function () {
  this.timeout(120_000);
  let team: GitFixture;
  before(async () => {
    team = await createGitFixture({ members: ['lead', 'ben'], operators: [] });
  });
  after(() => team?.dispose());

  it("on a branch whose .lockstep.json names another store, status and acquire are refused (exit 2); the holder's token is kept", async () => {
    const lead = team.member('lead');
    assert.equal(ok(await team.cli(lead, ['acquire']), 'lead acquires').grant, 1);
    const token = team.sessionToken(lead);
    // A copy of the store as it is now (the page with the lead's grant #1), and a branch that names it.
    const copy = `${team.store}-copy`;
    fs.cpSync(team.store, copy, { recursive: true, verbatimSymlinks: true });
    team.git(lead, 'checkout', '--quiet', '-b', 'other-store');
    const file = path.join(lead.dir, '.lockstep.json');
    const settings = JSON.parse(fs.readFileSync(file, 'utf8'));
    settings.path = copy;
    fs.writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`);
    team.git(lead, 'commit', '--quiet', '-am', 'another store');
    // The fixture's LOCKSTEP_PATH names the team's store: unset, the branch's committed store is the one read.
    const branchOnly = { env: { LOCKSTEP_PATH: undefined } };
    for (const args of [['acquire'], ['status']]) {
      const refused = await team.cli(lead, args, branchOnly);
      assert.equal(refused.code, 2, `${args[0]}: ${refused.stdout}${refused.stderr}`);
      assert.equal(refused.json.error.setting, '.lockstep.json');
      assert.match(
        refused.json.error.message,
        /^This clone holds grant #1 on another lock page \(file driver at .*, container [0-9a-f]{8}…\) than the one the checked-out \.lockstep\.json names/,
      );
    }
    assert.equal(team.sessionToken(lead), token, 'the session of grant #1 is untouched');
    team.git(lead, 'checkout', '--quiet', 'main');
    assert.equal(ok(await team.cli(lead, ['status']), 'back on main').state, 'held-by-me');
    ok(await team.cli(lead, ['release']), 'released where it was taken');
    team.git(lead, 'checkout', '--quiet', 'other-store');
    assert.equal(
      ok(await team.cli(lead, ['status'], branchOnly), 'with no grant, nothing is pinned: the copy reads as it is').state,
      'held-by-other',
    );
  });
});

describe('one lock page per container: git driver (real processes, real git)', function () {
  this.timeout(120_000);
  let team: GitFixture;
  let ana: TeamMember;

  before(async () => {
    team = await createGitFixture({ members: ['ana', 'ben'], operators: ['ana'], initArgs: ['--driver', 'git'] });
    ana = team.member('ana');
  });
  after(() => team?.dispose());

  it('init committed driver git, an explicit prefix and the remote, and pushed the page to the shared remote', async () => {
    const file = JSON.parse(fs.readFileSync(path.join(ana.dir, '.lockstep.json'), 'utf8'));
    assert.deepEqual([file.driver, file.prefix, file.gitRemote], ['git', 'lockstep', 'origin']);
    assert.match(team.git(ana, 'ls-remote', 'origin', 'refs/lockstep/*'), /refs\/lockstep\//);
    const status = ok(await team.cli(ana, ['status']), 'status');
    assert.deepEqual(status.page, { driver: 'git', location: 'remote origin', prefix: 'lockstep', container: team.container });
    assert.equal(ok(await team.cli(ana, ['acquire']), 'acquire').grant, 1);
  });

  it('a clone on the file driver or another prefix finds no page and issues no grant', async () => {
    const ben = team.member('ben');
    const committed = /\(git driver at remote origin, prefix lockstep\)/;
    pointedAway(
      await team.cli(ben, ['acquire'], { env: { LOCKSTEP_DRIVER: 'file' } }),
      { driver: 'file', location: team.store, prefix: 'lockstep' },
      committed,
      'LOCKSTEP_DRIVER',
    );
    pointedAway(
      await team.cli(ben, ['acquire'], { env: { LOCKSTEP_PREFIX: 'other' } }),
      { driver: 'git', location: 'remote origin', prefix: 'other' },
      committed,
      'LOCKSTEP_PREFIX',
    );
    pointedAway(
      await team.cli(ben, ['adopt', '--reason', 'x', '--grant', '0', '--next-id', '1'], { env: { LOCKSTEP_GIT_REMOTE: 'upstream' } }),
      { driver: 'git', location: 'remote upstream', prefix: 'lockstep' },
      committed,
      'LOCKSTEP_GIT_REMOTE',
    );
    const status = ok(await team.cli(ben, ['status']), 'status');
    assert.deepEqual([status.grant, status.holder.identity], [1, ana.identity]);
  });

  it('a lock ref moved back on the remote reads as set back in the clones that read past it, never as free', async () => {
    const ben = team.member('ben');
    const remoteGit = (...args: string[]) => execFileSync('git', ['-C', team.remote, ...args], { encoding: 'utf8' }).trim();
    const ref = remoteGit('for-each-ref', '--format=%(refname)', 'refs/lockstep/')
      .split('\n')
      .find(r => r.includes('record'))!;
    const atGrant1 = remoteGit('rev-parse', ref);
    ok(await team.cli(ana, ['release']), 'ana releases #1');
    assert.equal(ok(await team.cli(ben, ['acquire']), 'ben acquires').grant, 2);
    assert.equal(ok(await team.cli(ana, ['status']), 'ana reads #2').grant, 2);
    remoteGit('update-ref', ref, atGrant1);
    await assertSetBack(
      team,
      [
        [ana, ['status']],
        [ana, ['acquire']],
        [ben, ['status']],
      ],
      1,
      2,
    );
  });
});

describe('one lock page per container: sql driver on SQLite (real processes, a real database file)', function () {
  this.timeout(120_000);
  let team: GitFixture;

  before(async () => {
    team = await createGitFixture({ members: ['ana', 'ben'], operators: ['ana'], initArgs: ['--driver', 'sql'] });
  });
  after(() => team?.dispose());

  it('init migrated, created the page and committed the database URL; migrate uses the committed driver', async () => {
    const ana = team.member('ana');
    const file = JSON.parse(fs.readFileSync(path.join(ana.dir, '.lockstep.json'), 'utf8'));
    const url = `sqlite://${path.join(team.store, 'lockstep.sqlite')}`;
    assert.deepEqual([file.driver, file.prefix, file.databaseUrl], ['sql', 'lockstep', url]);
    assert.deepEqual(ok(await team.cli(ana, ['migrate'], { env: { LOCKSTEP_PATH: undefined } }), 'migrate'), { ok: true, migrated: true });
    const status = ok(await team.cli(ana, ['status'], { env: { LOCKSTEP_PATH: undefined } }), 'status');
    assert.deepEqual(status.page, { driver: 'sql', location: url, prefix: 'lockstep', container: team.container });
    assert.equal(ok(await team.cli(ana, ['acquire']), 'acquire').grant, 1);
  });

  it('a clone pointed at another database file is refused (exit 5) by migrate and every command, and nothing is created there', async () => {
    const ben = team.member('ben');
    const other = path.join(team.root, 'other.sqlite');
    const committed = /\(sql driver at sqlite:\/\//;
    for (const args of [['migrate'], ['acquire'], ['adopt', '--reason', 'x', '--grant', '0', '--next-id', '1']]) {
      pointedAway(
        await team.cli(ben, args, { env: { LOCKSTEP_DATABASE_URL: `sqlite://${other}` } }),
        { driver: 'sql', location: `sqlite://${other}`, prefix: 'lockstep' },
        committed,
        'LOCKSTEP_DATABASE_URL',
      );
    }
    assert.equal(fs.existsSync(other), false, 'no database was created at the stray URL');
    const status = ok(await team.cli(ben, ['status']), 'status');
    assert.deepEqual([status.grant, status.holder.identity], [1, 'ana@example.com']);
  });
});
