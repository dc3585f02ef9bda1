import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createGitFixture, expectError, expectOk, type GitFixture, type TeamMember } from '../helpers/gitFixture';
import { makeTempDir, removeTempDir } from '../helpers/tempDir';
import { waitFor } from '../helpers/waitFor';

/**
 * The commands the container story (containerCli.test.ts) does not reach: withdraw, assign, audit --limit and
 * --history, compact, migrate, and init's --driver/--protect/--remote; and the push proof's removal when the
 * lease is lost. Real `lockstep` processes in clones of a real git repository; containers are made only by
 * `lockstep init` (through createGitFixture).
 */

describe('CLI commands beyond the container story (real processes, real git)', function () {
  this.timeout(120_000);

  describe('file driver: withdraw, assign, audit --limit', () => {
    let team: GitFixture;
    let lead: TeamMember, ana: TeamMember, ben: TeamMember;
    const status = async (who: TeamMember) => expectOk(await team.cli(who, ['status']), `status of ${who.name}`);

    before(async () => {
      team = await createGitFixture({ members: ['lead', 'ana', 'ben'], operators: ['lead'] });
      [lead, ana, ben] = team.members;
      expectOk(await team.cli(lead, ['acquire']), 'acquire');
    });
    after(() => team?.dispose());

    it('withdraw takes a petition out of the queue, and those behind move up; a second withdraw is refused', async () => {
      expectOk(await team.cli(ana, ['petition', '--note', 'first']), 'petition');
      expectOk(await team.cli(ben, ['petition']), 'petition');
      assert.deepEqual(expectOk(await team.cli(ana, ['withdraw']), 'withdraw'), { ok: true, position: 1 });
      const bens = await status(ben);
      assert.equal(bens.position, 1);
      assert.deepEqual(
        bens.queue.map((p: { identity: string }) => p.identity),
        [ben.identity],
      );
      assert.equal((await status(ana)).state, 'held-by-other', 'ana is no longer queued');
      expectError(await team.cli(ana, ['withdraw']), 1, 'refused', 'not-queued');
    });

    it('assign records a block of work for a coworker on the lock page; only the lead may', async () => {
      assert.deepEqual(expectOk(await team.cli(lead, ['assign', '--to', ana.identity, '--block', 'chapter 2']), 'assign'), {
        ok: true,
        to: ana.identity,
        index: 1,
      });
      assert.equal(expectOk(await team.cli(lead, ['assign', '--to', ben.identity, '--block', 'chapter 3']), 'assign').index, 2);
      const blocks = (await status(ana)).blocks;
      assert.equal(blocks.length, 2);
      assert.deepEqual(
        blocks.map((b: { to: string }) => b.to),
        [ana.identity, ben.identity],
      );
      assert.match(JSON.stringify(blocks), /chapter 2.*chapter 3/);
      expectError(await team.cli(ana, ['assign', '--to', ben.identity, '--block', 'mine now']), 1, 'refused', 'not-holder');
      expectError(await team.cli(lead, ['assign', '--to', ana.identity]), 2, 'configuration');
    });

    it('audit --limit N shows the newest N lines of the full trail, in order', async () => {
      const all = expectOk(await team.cli(ben, ['audit']), 'audit').audit;
      assert.ok(all.length >= 6, `acquire, 3 petitions/withdrawals, 2 assigns: ${JSON.stringify(all)}`);
      const two = expectOk(await team.cli(ben, ['audit', '--limit', '2']), 'audit --limit 2').audit;
      assert.deepEqual(two, all.slice(-2));
      assert.equal(two[1].action, 'assign');
      const human = await team.cli(ben, ['audit', '--limit', '1'], { json: false });
      assert.equal(human.code, 0);
      assert.equal(human.stdout.trim().split('\n').length, 1, human.stdout);
      // As its help says: a whole number from 1, else a usage error (it used to show one line).
      for (const bad of ['abc', '0', '-3'])
        assert.equal(expectError(await team.cli(ben, ['audit', `--limit=${bad}`]), 2, 'configuration').setting, '--limit');
    });

    it('audit --history is refused on the file driver, saying to drop --history (exit 2)', async () => {
      const error = expectError(await team.cli(ben, ['audit', '--history']), 2, 'configuration');
      assert.match(error.message, /drop --history/);
    });

    it('compact and migrate are refused on the file driver (exit 2): nothing to squash, nothing to migrate', async () => {
      expectError(await team.cli(lead, ['compact']), 2, 'configuration');
      expectError(await team.cli(lead, ['migrate']), 2, 'configuration');
      assert.equal((await status(lead)).state, 'held-by-me', 'the refusals changed nothing');
    });
  });

  describe('the push proof is removed when the lease is lost', () => {
    let team: GitFixture;
    let lead: TeamMember, ana: TeamMember;
    before(async () => {
      team = await createGitFixture({ members: ['lead', 'ana'], operators: ['lead'], initArgs: ['--server-guard'] });
      [lead, ana] = team.members;
    });
    after(() => team?.dispose());

    it('a heartbeat after the lease expired fails (exit 1), removes push.config, and status says stale', async () => {
      const pushConfig = path.join(lead.dir, '.git', 'lockstep', 'push.config');
      // The shortest lease (60 s), granted so that it runs out 2 s from now (lapsingGrant.ts).
      const got = await team.lapsingGrant(lead, 2_000);
      assert.match(
        fs.readFileSync(pushConfig, 'utf8'),
        new RegExp(`lockstep-grant=${got.grant}\\n\\tpushOption = lockstep-proof=[0-9a-f]{64}`),
      );
      // Real processes: the lease must really expire; ana takes over as soon as it has.
      await waitFor(async () => (await team.cli(ana, ['acquire'])).code === 0, {
        timeoutMs: 30_000,
        intervalMs: 250,
        description: "lead's lease to expire",
      });
      expectError(await team.cli(lead, ['heartbeat']), 1, 'lease-lost');
      assert.equal(fs.existsSync(pushConfig), false, 'the proof of a lost grant does not stay in push options');
      assert.equal(expectOk(await team.cli(lead, ['status']), 'status').state, 'stale');
      // The include in .git/config now points at nothing: git still works, and pushes carry no lockstep option.
      assert.match(team.git(lead, 'config', '--get-all', 'include.path'), /lockstep\/push\.config/);
      const options = spawnSync('git', ['-C', lead.dir, 'config', '--get-all', 'push.pushOption'], { encoding: 'utf8' });
      assert.equal(options.status, 1, `git config finds no push option (exit 1 = key absent): ${options.stdout}${options.stderr}`);
    });
  });

  describe('git driver: audit --history and compact', () => {
    let team: GitFixture;
    let lead: TeamMember, ana: TeamMember;
    before(async () => {
      team = await createGitFixture({ members: ['lead', 'ana'], operators: ['lead'], initArgs: ['--driver', 'git'] });
      [lead, ana] = team.members;
    });
    after(() => team?.dispose());

    it('init --driver git writes driver "git"; transitions are commits on the remote\'s lock ref', async () => {
      assert.equal(JSON.parse(fs.readFileSync(path.join(lead.dir, '.lockstep.json'), 'utf8')).driver, 'git');
      expectOk(await team.cli(lead, ['acquire']), 'acquire');
      expectOk(await team.cli(ana, ['petition', '--note', 'next']), 'petition');
      expectOk(await team.cli(ana, ['withdraw']), 'withdraw');
      const refs = execFileSync('git', ['--git-dir', team.remote, 'for-each-ref', '--format=%(refname)'], { encoding: 'utf8' });
      assert.match(refs, /refs\/lockstep\//, 'the lock lives in the shared remote');
      assert.equal(fs.readdirSync(team.store).length, 0, 'nothing in the file store');
    });

    it('audit --history lists every transition, oldest first, and --limit keeps the newest', async () => {
      const history = expectOk(await team.cli(ana, ['audit', '--history']), 'audit --history').history;
      assert.ok(history.length >= 3, JSON.stringify(history));
      const text = history.map((e: { summary: string }) => e.summary).join('\n');
      assert.match(text, /acquire[\s\S]*petition[\s\S]*withdraw/);
      const times = history.map((e: { time: number }) => e.time);
      assert.deepEqual(
        times,
        [...times].sort((a, b) => a - b),
        'oldest first',
      );
      const last = expectOk(await team.cli(ana, ['audit', '--history', '--limit', '1']), 'audit --history --limit 1').history;
      assert.deepEqual(last, history.slice(-1));
    });

    it('compact squashes the lock ref to one commit; the record and audit --history survive it', async () => {
      const before = expectOk(await team.cli(ana, ['status']), 'status');
      const history = expectOk(await team.cli(ana, ['audit', '--history']), 'audit --history').history;
      const commitsPerRef = () =>
        Object.fromEntries(
          execFileSync('git', ['--git-dir', team.remote, 'for-each-ref', '--format=%(refname)', 'refs/lockstep/'], { encoding: 'utf8' })
            .trim()
            .split('\n')
            .filter(Boolean)
            .map(ref => [
              ref,
              Number(execFileSync('git', ['--git-dir', team.remote, 'rev-list', '--count', ref], { encoding: 'utf8' }).trim()),
            ]),
        );
      const longBefore = Object.entries(commitsPerRef())
        .filter(([, n]) => n >= 3)
        .map(([ref]) => ref);
      assert.equal(longBefore.length, 1, `one lock ref carries the transitions: ${JSON.stringify(commitsPerRef())}`);
      expectOk(await team.cli(lead, ['compact']), 'compact');
      assert.equal(commitsPerRef()[longBefore[0]], 1, 'compact left one snapshot commit');
      const after = expectOk(await team.cli(ana, ['status']), 'status');
      assert.deepEqual({ ...after, timeLeftMs: 0 }, { ...before, timeLeftMs: 0 }, 'the record is unchanged');
      const kept = expectOk(await team.cli(ana, ['audit', '--history']), 'audit --history').history;
      assert.ok(kept.length >= history.length, `history after compact: ${kept.length} entries, before: ${history.length}`);
      // The lock still works after the rewrite.
      expectOk(await team.cli(ana, ['petition']), 'petition after compact');
    });
  });

  describe('sql driver (SQLite): migrate', () => {
    let team: GitFixture;
    let lead: TeamMember;
    let database: string;
    before(async () => {
      const dir = makeTempDir('lockstep-sqlite');
      database = path.join(dir, 'locks.db');
      const env = { LOCKSTEP_DATABASE_URL: `sqlite://${database}`, LOCKSTEP_DRIVER: 'sql' };
      team = await createGitFixture({
        members: ['lead'],
        operators: ['lead'],
        initArgs: ['--driver', 'sql'],
        env,
        beforeInit: [['migrate']],
      });
      [lead] = team.members;
    });
    after(() => {
      team?.dispose();
      removeTempDir(path.dirname(database));
    });

    it('migrate created the table; running it again changes nothing; the container works on it', async () => {
      assert.ok(fs.existsSync(database), 'the SQLite file exists');
      assert.deepEqual(expectOk(await team.cli(lead, ['migrate']), 'migrate again'), { ok: true, migrated: true });
      assert.equal(JSON.parse(fs.readFileSync(path.join(lead.dir, '.lockstep.json'), 'utf8')).driver, 'sql');
      const got = expectOk(await team.cli(lead, ['acquire']), 'acquire');
      assert.equal(expectOk(await team.cli(lead, ['status']), 'status').grant, got.grant);
      assert.equal(expectOk(await team.cli(lead, ['status']), 'status').driver, 'sql');
    });

    it('without migrate, a command on a fresh database fails and says to run `lockstep migrate`', async () => {
      const fresh = path.join(path.dirname(database), 'fresh.db');
      // The database is the page's location, so it is committed: this clone's .lockstep.json names the fresh one.
      const file = path.join(lead.dir, '.lockstep.json');
      const committed = fs.readFileSync(file, 'utf8');
      fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(committed), databaseUrl: `sqlite://${fresh}` }));
      try {
        const result = await team.cli(lead, ['status'], { env: { LOCKSTEP_DATABASE_URL: `sqlite://${fresh}` } });
        assert.notEqual(result.code, 0, result.stdout);
        assert.match(result.json.error.message, /lockstep migrate/);
      } finally {
        fs.writeFileSync(file, committed);
      }
    });
  });

  describe('init --driver, --protect, --remote', () => {
    let team: GitFixture;
    before(async () => {
      team = await createGitFixture({ members: ['ana'], operators: ['ana'] });
    });
    after(() => team?.dispose());

    it('writes the driver, every protected branch and the remote asked for, and status follows them', async () => {
      // A second repository, whose shared remote is named upstream.
      const bare = path.join(team.root, 'other.git');
      const repo = path.join(team.root, 'other');
      execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', bare]);
      execFileSync('git', ['clone', '--quiet', '--origin', 'upstream', bare, repo], { stdio: 'ignore' });
      const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' });
      git('config', 'user.email', 'zoe@example.com');
      git('config', 'user.name', 'zoe');
      git('symbolic-ref', 'HEAD', 'refs/heads/main');
      fs.writeFileSync(path.join(repo, 'README.md'), '# other\n');
      git('add', 'README.md');
      git('commit', '--quiet', '-m', 'first');
      git('push', '--quiet', '-u', 'upstream', 'main');
      const other: TeamMember = { name: 'zoe', identity: 'zoe@example.com', dir: repo };
      const got = expectOk(
        await team.cli(other, [
          'init',
          '--driver',
          'file',
          '--protect',
          'main',
          '--protect',
          'release/1.x',
          '--remote',
          'upstream',
          '--operator',
          'ops@example.com',
        ]),
        'init',
      );
      const written = JSON.parse(fs.readFileSync(path.join(repo, '.lockstep.json'), 'utf8'));
      assert.equal(got.file, path.join(repo, '.lockstep.json'));
      assert.equal(written.driver, 'file');
      assert.deepEqual(written.protectedBranches, ['main', 'release/1.x']);
      assert.equal(written.remote, 'upstream');
      assert.deepEqual(written.operators, ['ops@example.com']);
      assert.deepEqual(got.settings, written);
      assert.notEqual(written.container, team.container, 'a new container');
      const s = expectOk(await team.cli(other, ['status']), 'status');
      assert.equal(s.container, written.container);
      assert.equal(s.driver, 'file');
    });

    it('refuses an unknown driver (exit 2) and writes nothing', async () => {
      const repo = path.join(team.root, 'third');
      execFileSync('git', ['clone', '--quiet', team.remote, repo]);
      fs.rmSync(path.join(repo, '.lockstep.json'));
      const error = expectError(
        await team.cli({ name: 'x', identity: 'x@example.com', dir: repo }, ['init', '--driver', 'floppy']),
        2,
        'configuration',
      );
      assert.match(error.message, /driver/);
      assert.equal(fs.existsSync(path.join(repo, '.lockstep.json')), false);
    });

    it('refuses the memory driver (exit 2), whose page no later command would find, and writes nothing', async () => {
      const repo = path.join(team.root, 'fourth');
      execFileSync('git', ['clone', '--quiet', team.remote, repo]);
      fs.rmSync(path.join(repo, '.lockstep.json'));
      const who = { name: 'y', identity: 'y@example.com', dir: repo };
      for (const env of [{}, { LOCKSTEP_DRIVER: 'memory' }]) {
        const args = 'LOCKSTEP_DRIVER' in env ? ['init'] : ['init', '--driver', 'memory'];
        const error = expectError(await team.cli(who, args, { env }), 2, 'configuration');
        assert.match(error.message, /memory driver keeps a lock page only inside the process/);
        assert.equal(fs.existsSync(path.join(repo, '.lockstep.json')), false);
      }
    });
  });
});
