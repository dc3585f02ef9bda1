import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VERIFY_MERGE_LINE, VERIFY_PUSH_LINE } from '../../src/core/forge/forgeTemplates';
import { childEnv } from '../helpers/children';
import { cliPath, createGitFixture, expectError, expectOk, type GitFixture, type TeamMember } from '../helpers/gitFixture';
import { githubCache, githubVerifyStep, gitlabCache, gitlabVerifyStep, lockstepLines, type ForgeStep } from '../helpers/forgeSteps';
import { runShippedCheck } from '../helpers/shippedCheck';

/**
 * Issue #25: a forge with no server hook, simulated faithfully — a bare repository with no hooks that
 * anyone can push to — and `lockstep verify` run from a clean clone exactly as the shipped GitHub
 * workflow and GitLab job run it: their own command lines (read from docs/forges/), fed by the
 * variables they name, with the values the forge would give them. Git driver: the page and its
 * history live on the same remote.
 */
const GITHUB = 'docs/forges/github/lockstep-verify.yml';
const GITLAB = 'docs/forges/gitlab/lockstep-verify.gitlab-ci.yml';
const ZEROS = '0'.repeat(40);

describe('lockstep verify on a forge without server hooks (bare remote, no hooks, clean CI clone)', function () {
  this.timeout(240_000);
  let team: GitFixture;
  let alice: TeamMember, bob: TeamMember;
  let ciCount = 0;
  const ran = new Set<string>();

  const steps = {
    githubPush: githubVerifyStep(GITHUB, 'verify-push'),
    githubMerge: githubVerifyStep(GITHUB, 'verify-merge'),
    gitlabPush: gitlabVerifyStep(GITLAB, 'lockstep-verify-push'),
    gitlabMerge: gitlabVerifyStep(GITLAB, 'lockstep-verify-merge'),
  };

  /** A clean clone of the forge's repository at `checkout`, where the step's command runs as the forge runs it, with the job's cache. */
  async function runCheck(
    step: ForgeStep,
    context: Record<string, string>,
    checkout: string,
  ): Promise<{ code: number | null; out: string; summary: string }> {
    const dir = path.join(team.root, `ci-${++ciCount}`);
    const home = path.join(dir, 'home');
    fs.mkdirSync(home, { recursive: true });
    ran.add(step.run);
    return runShippedCheck({
      step,
      dir,
      remote: team.remote,
      checkout,
      context,
      cache: path.join(team.root, 'forge-cache', `${step.forge}-${step.job}`),
      env: childEnv({ HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' }),
      cli: await cliPath(),
    });
  }

  const tip = () => execFileSync('git', ['--git-dir', team.remote, 'rev-parse', 'refs/heads/main'], { encoding: 'utf8' }).trim();
  const commit = (who: TeamMember, file: string, text: string) => {
    fs.writeFileSync(path.join(who.dir, file), text);
    team.git(who, 'add', file);
    team.git(who, 'commit', '--quiet', '-m', `${who.name}: ${file}`);
    return team.git(who, 'rev-parse', 'HEAD').trim();
  };
  const pushContext = (before: string, after: string) => ({
    'github.event.before': before,
    'github.event.after': after,
    'github.ref_name': 'main',
    CI_COMMIT_BEFORE_SHA: before,
    CI_COMMIT_SHA: after,
    CI_COMMIT_BRANCH: 'main',
  });
  const mergeContext = (head: string, login: string) => ({
    'github.base_ref': 'main',
    'github.event.pull_request.head.sha': head,
    'github.event.pull_request.user.login': login,
    CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main',
    CI_COMMIT_SHA: head,
    GITLAB_USER_LOGIN: login,
  });

  before(async () => {
    team = await createGitFixture({
      members: ['alice', 'bob'],
      operators: ['alice'],
      initArgs: ['--driver', 'git'],
      settings: { pushers: { 'alice-gh': 'alice@example.com', 'bob-gh': 'bob@example.com' }, protectedBranches: ['main', 'release'] },
    });
    [alice, bob] = team.members;
    for (const who of team.members) team.git(who, 'pull', '--quiet', '--ff-only');
    assert.deepEqual(
      fs.readdirSync(path.join(team.remote, 'hooks')).filter(f => !f.endsWith('.sample')),
      [],
      'the forge runs no hook',
    );
  });
  after(() => team?.dispose());

  it('the shipped files run exactly these command lines', () => {
    assert.equal(steps.githubPush.run, VERIFY_PUSH_LINE);
    assert.equal(steps.gitlabPush.run, VERIFY_PUSH_LINE);
    assert.equal(steps.githubMerge.run, VERIFY_MERGE_LINE);
    assert.equal(steps.gitlabMerge.run, VERIFY_MERGE_LINE);
  });

  let alicePush: { before: string; after: string };
  it('alice (holder) lands through the client (release --push): verify --push passes on both forges', async () => {
    expectOk(await team.cli(alice, ['acquire']), 'acquire');
    const before = tip();
    const after = commit(alice, 'alice.txt', 'alice\n');
    expectOk(await team.cli(alice, ['release', '--push']), 'release --push');
    assert.equal(tip(), after);
    alicePush = { before, after };
    for (const step of [steps.githubPush, steps.gitlabPush]) {
      const check = await runCheck(step, pushContext(before, after), after);
      assert.equal(check.code, 0, check.out);
      assert.match(check.out, /passed/);
    }
    const github = await runCheck(steps.githubPush, pushContext(before, after), after);
    assert.match(github.summary, /✅ Lockstep verify: push to `main`/);
    assert.match(github.summary, new RegExp(`${after.slice(0, 12)} \\| alice@example\\.com .*\\| alice@example\\.com \\(grant #1\\)`));
    assert.match(github.summary, /declared by the clients that wrote it, not proven/);
  });

  it("bob pushes to main with --no-verify and no grant: verify --push fails, naming bob's commit", async () => {
    team.git(bob, 'pull', '--quiet', '--ff-only');
    const before = tip();
    const after = commit(bob, 'bob.txt', 'bob\n');
    team.git(bob, 'push', '--quiet', '--no-verify', 'origin', 'main');
    assert.equal(tip(), after, 'the forge accepted the push: only the check can catch it');
    for (const step of [steps.githubPush, steps.gitlabPush]) {
      const check = await runCheck(step, pushContext(before, after), after);
      assert.equal(check.code, 1, check.out);
      assert.match(check.out, new RegExp(`${after.slice(0, 12)} \\(bob@example\\.com\\)`));
      assert.match(check.out, /without an announcement by the live holder/);
    }
    const github = await runCheck(steps.githubPush, pushContext(before, after), after);
    assert.match(github.summary, /❌/);
    assert.match(github.summary, new RegExp(`${after.slice(0, 12)} .*\\*\\*not announced\\*\\*`));
  });

  it('a landing through the pre-push hook (plain git push) is announced and passes', async () => {
    team.git(alice, 'pull', '--quiet', '--ff-only');
    expectOk(await team.cli(alice, ['hooks', 'install']), 'hooks install');
    expectOk(await team.cli(alice, ['acquire']), 'acquire');
    const before = tip();
    const after = commit(alice, 'hooked.txt', 'through the hook\n');
    team.git(alice, 'push', '--quiet', 'origin', 'main');
    const check = await runCheck(steps.githubPush, pushContext(before, after), after);
    assert.equal(check.code, 0, check.out);
    expectOk(await team.cli(alice, ['release']), 'release');
  });

  it('a rewrite of main (force push) fails whatever was announced', async () => {
    const before = tip();
    team.git(bob, 'fetch', '--quiet', 'origin');
    team.git(bob, 'reset', '--quiet', '--hard', alicePush.after);
    team.git(bob, 'push', '--quiet', '--no-verify', '--force', 'origin', 'main');
    const check = await runCheck(steps.githubPush, pushContext(before, alicePush.after), alicePush.after);
    assert.equal(check.code, 1, check.out);
    assert.match(check.out, /rewrote main/);
    // Put the branch back, as an operator would.
    team.git(bob, 'push', '--quiet', '--no-verify', '--force', 'origin', `${before}:refs/heads/main`);
    team.git(bob, 'reset', '--quiet', '--hard', before);
  });

  it("announcements are read from the page's history through compactions; a history a compaction trimmed is said to be", async () => {
    expectOk(await team.cli(alice, ['compact']), 'compact');
    const check = await runCheck(steps.gitlabPush, pushContext(alicePush.before, alicePush.after), alicePush.after);
    assert.equal(check.code, 0, check.out);
    const summary = await runCheck(steps.githubPush, pushContext(alicePush.before, alicePush.after), alicePush.after);
    assert.equal(summary.code, 0, summary.out);
    assert.match(summary.summary, /History read: every transition of the page/);
    // A compaction keeps the newest 2,000 entries only (AUDIT_LOG_KEEP): a snapshot that has left the page's creation out (written
    // here by the administrator) still holds the announcement, and the check says that the history it read is trimmed.
    const git = (args: string[], input?: string) =>
      execFileSync('git', ['--git-dir', team.remote, ...args], { encoding: 'utf8', ...(input === undefined ? {} : { input }) }).trim();
    const ref = git(['for-each-ref', '--format=%(refname)', 'refs/lockstep/'])
      .split('\n')
      .find(r => r.includes('/records/')) as string;
    const log = git(['cat-file', 'blob', `${ref}:audit.log`]).split('\n');
    assert.equal(JSON.parse(log[0]).line.action, 'init', 'the snapshot starts at the creation');
    const tree = git(
      ['mktree'],
      `100644 blob ${git(['hash-object', '-w', '--stdin'], `${log.slice(1).join('\n')}\n`)}\taudit.log\n100644 blob ${git(['rev-parse', `${ref}:record.json`])}\trecord.json\n`,
    );
    git([
      'update-ref',
      ref,
      git(
        ['-c', 'user.name=admin', '-c', 'user.email=admin@example.com', 'commit-tree', tree],
        `lockstep: history compacted\n\nLockstep-Snapshot: ${log.length - 1}\n`,
      ),
    ]);
    const trimmed = await runCheck(steps.githubPush, pushContext(alicePush.before, alicePush.after), alicePush.after);
    assert.equal(trimmed.code, 0, trimmed.out);
    assert.match(trimmed.summary, /keeps the newest transitions only and has dropped older ones/);
  });

  it("verify --merge: passes for the holder's request; fails for anyone else's, for an old base, and for an unknown login", async () => {
    team.git(alice, 'fetch', '--quiet', 'origin');
    team.git(alice, 'checkout', '--quiet', '-B', 'feature', 'origin/main');
    expectOk(await team.cli(alice, ['acquire']), 'acquire');
    const head = commit(alice, 'feature.txt', 'feature\n');
    team.git(alice, 'push', '--quiet', 'origin', 'feature');
    for (const step of [steps.githubMerge, steps.gitlabMerge]) {
      const ok = await runCheck(step, mergeContext(head, 'alice-gh'), head);
      assert.equal(ok.code, 0, ok.out);
      const other = await runCheck(step, mergeContext(head, 'bob-gh'), head);
      assert.equal(other.code, 1, other.out);
      assert.match(other.out, /held by alice@example\.com, not by bob@example\.com/);
      const stranger = await runCheck(step, mergeContext(head, 'mallory'), head);
      assert.equal(stranger.code, 1, stranger.out);
      assert.match(stranger.out, /mallory has no Lockstep identity/);
    }
    // main moves on: the request is now based on an old tip.
    const old = head;
    team.git(alice, 'checkout', '--quiet', 'main');
    team.git(alice, 'pull', '--quiet', '--ff-only');
    const moved = commit(alice, 'moved.txt', 'main moved\n');
    expectOk(await team.cli(alice, ['release', '--push']), 'release --push');
    // release --push announced it, and the pre-push hook (installed above) found it on the page: one line, not two.
    const audit = expectOk(await team.cli(alice, ['audit']), 'audit').audit as { action: string; detail?: string }[];
    assert.equal(audit.filter(l => l.action === 'land' && l.detail?.endsWith(`..${moved}`)).length, 1);
    expectOk(await team.cli(alice, ['acquire']), 'acquire again');
    const stale = await runCheck(steps.githubMerge, mergeContext(old, 'alice-gh'), old);
    assert.equal(stale.code, 1, stale.out);
    assert.match(stale.out, /not based on main's tip/);
    expectOk(await team.cli(alice, ['release']), 'release');
    // Nobody holds the lock: even alice's request fails.
    const free = await runCheck(steps.githubMerge, mergeContext(old, 'alice-gh'), old);
    assert.equal(free.code, 1, free.out);
    assert.match(free.out, /No one holds the live grant now/);
  });

  it('a new branch and an unprotected branch have defined answers; bad input is a usage error', async () => {
    const main = tip();
    const check = await runCheck(steps.githubPush, { ...pushContext(ZEROS, main), 'github.ref_name': 'topic' }, main);
    assert.equal(check.code, 0, check.out);
    assert.match(check.out, /topic is not a protected branch/);
    expectError(await team.cli(alice, ['verify', '--push', 'nonsense']), 2, 'configuration');
    expectError(await team.cli(alice, ['verify']), 2, 'configuration');
  });

  it('a new protected branch (OLD all zeros) is judged by the commits no other branch has', async () => {
    team.git(alice, 'checkout', '--quiet', 'main');
    team.git(alice, 'pull', '--quiet', '--ff-only');
    team.git(alice, 'checkout', '--quiet', '-b', 'release');
    expectOk(await team.cli(alice, ['acquire']), 'acquire');
    const cut = commit(alice, 'release.txt', 'release notes\n');
    team.git(alice, 'push', '--quiet', 'origin', 'release'); // the pre-push hook announces `release new..<cut>`
    team.git(alice, 'checkout', '--quiet', 'main'); // release checks the first protected branch (main): nothing unpushed there
    expectOk(await team.cli(alice, ['release']), 'release the lock');
    const releaseContext = (after: string) => ({ ...pushContext(ZEROS, after), 'github.ref_name': 'release' });
    const passed = await runCheck(steps.githubPush, releaseContext(cut), cut);
    assert.equal(passed.code, 0, passed.out);
    assert.match(passed.out, new RegExp(`${cut.slice(0, 12)} announced by alice@example\\.com`));
    // bob, with no grant, deletes the branch and creates it again with a commit of his own.
    team.git(bob, 'fetch', '--quiet', 'origin');
    team.git(bob, 'checkout', '--quiet', '-B', 'mine', 'origin/main');
    const own = commit(bob, 'bob-release.txt', "bob's cut\n");
    team.git(bob, 'push', '--quiet', '--no-verify', 'origin', ':refs/heads/release');
    team.git(bob, 'push', '--quiet', '--no-verify', 'origin', 'mine:refs/heads/release');
    const failed = await runCheck(steps.githubPush, releaseContext(own), own);
    assert.equal(failed.code, 1, failed.out);
    assert.match(failed.out, new RegExp(`${own.slice(0, 12)} \\(bob@example\\.com\\)`));
    const deleted = await runCheck(steps.githubPush, { ...pushContext(own, ZEROS), 'github.ref_name': 'release' }, 'origin/main');
    assert.equal(deleted.code, 1, deleted.out);
    assert.match(deleted.out, /was deleted/);
  });

  it('forge init writes the shipped files into the clone, once; a second run and an unknown forge are refused', async () => {
    for (const [forge, file, shipped] of [
      ['github', '.github/workflows/lockstep-verify.yml', GITHUB],
      ['gitlab', '.gitlab/lockstep-verify.gitlab-ci.yml', GITLAB],
    ]) {
      assert.equal(expectOk(await team.cli(bob, ['forge', 'init', forge]), `forge init ${forge}`).file, file);
      assert.equal(fs.readFileSync(path.join(bob.dir, file), 'utf8'), fs.readFileSync(path.join(__dirname, '..', '..', shipped), 'utf8'));
      const again = expectError(await team.cli(bob, ['forge', 'init', forge]), 1, 'refused');
      assert.match(again.message, /exists already; forge init never overwrites/);
    }
    expectError(await team.cli(bob, ['forge', 'init', 'bitbucket']), 2, 'configuration');
    const help = await team.cli(bob, ['--help'], { json: false });
    assert.match(help.stdout, /\n {2}verify\s+a forge's required check/);
    assert.match(help.stdout, /\n {2}forge init\s+write the ready-made check/);
  });

  it("the shipped files keep the check's witness in the forge's cache: restored before the check, saved after it, failed or not", () => {
    for (const job of ['verify-push', 'verify-merge']) {
      const { restore, save } = githubCache(GITHUB, job);
      const witness = githubVerifyStep(GITHUB, job).env.LOCKSTEP_WITNESS;
      // Outside the checkout: the commit under check can never hold it.
      assert.equal(restore.path, `\${{ runner.temp }}/lockstep-witness`, job);
      assert.equal(witness, `${restore.path}/page`, job);
      assert.equal(save.path, restore.path, job);
      // A new entry every run (a cache entry is never overwritten), the newest restored by its prefix.
      assert.equal(restore.key, `lockstep-witness-\${{ github.run_id }}-\${{ github.run_attempt }}`, job);
      assert.equal(save.key, restore.key, job);
      assert.ok(restore.key.startsWith(restore.restoreKeys ?? '-') && restore.restoreKeys === 'lockstep-witness-', job);
      assert.equal(save.saved, 'always()', `${job}: a failed check keeps its witness too`);
    }
    for (const job of ['lockstep-verify-push', 'lockstep-verify-merge']) {
      const cache = gitlabCache(GITLAB, job);
      assert.deepEqual(cache.paths, ['.lockstep-witness/'], job);
      assert.equal(gitlabVerifyStep(GITLAB, job).env.LOCKSTEP_WITNESS, '$CI_PROJECT_DIR/.lockstep-witness/page', job);
      assert.equal(cache.key, 'lockstep-witness', job);
      assert.equal(cache.saved, 'always', job);
    }
  });

  it('a witness the commit under check tracks is refused before anything is read (GitLab caches inside the checkout)', async () => {
    team.git(bob, 'fetch', '--quiet', 'origin');
    team.git(bob, 'checkout', '--quiet', '-B', 'planted', 'origin/main');
    fs.mkdirSync(path.join(bob.dir, '.lockstep-witness'), { recursive: true });
    const head = commit(bob, '.lockstep-witness/page', '{"digest":"0","text":"{}"}\n');
    team.git(bob, 'push', '--quiet', '--no-verify', 'origin', 'planted');
    for (const step of [steps.gitlabMerge, steps.gitlabPush]) {
      const context = step === steps.gitlabMerge ? mergeContext(head, 'bob-gh') : { ...pushContext(tip(), head), CI_COMMIT_BRANCH: 'main' };
      const check = await runCheck(step, context, head);
      assert.equal(check.code, 2, check.out);
      assert.match(check.out, /--witness file \.lockstep-witness\/page is tracked by the commit under check/);
    }
    team.git(bob, 'checkout', '--quiet', 'main');
    team.git(bob, 'push', '--quiet', '--no-verify', 'origin', ':planted');
  });

  it('every lockstep line of the shipped files was run by this test', () => {
    for (const file of [GITHUB, GITLAB]) {
      for (const line of lockstepLines(file)) assert.ok(ran.has(line), `${file}: ${line} was not run`);
    }
    team.assertNoTokenLeaked();
  });
});

describe("lockstep verify with the file driver: the page's own bounded audit trail", function () {
  this.timeout(180_000);
  let team: GitFixture;
  let alice: TeamMember;
  const step = githubVerifyStep(GITHUB, 'verify-push');

  before(async () => {
    team = await createGitFixture({ members: ['alice'], operators: ['alice'] });
    [alice] = team.members;
  });
  after(() => team?.dispose());

  it('a landing through release --push passes, and the summary says which history it read', async () => {
    const before = team.git(alice, 'rev-parse', 'HEAD').trim();
    expectOk(await team.cli(alice, ['acquire']), 'acquire');
    fs.writeFileSync(path.join(alice.dir, 'a.txt'), 'a\n');
    team.git(alice, 'add', 'a.txt');
    team.git(alice, 'commit', '--quiet', '-m', 'a');
    const after = team.git(alice, 'rev-parse', 'HEAD').trim();
    expectOk(await team.cli(alice, ['release', '--push']), 'release --push');
    const dir = path.join(team.root, 'ci');
    const home = path.join(dir, 'home');
    fs.mkdirSync(home, { recursive: true });
    const done = await runShippedCheck({
      step,
      dir,
      remote: team.remote,
      checkout: after,
      context: { 'github.event.before': before, 'github.event.after': after, 'github.ref_name': 'main' },
      cache: path.join(team.root, 'forge-cache'),
      env: childEnv({ HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' }),
      cli: await cliPath(),
    });
    assert.equal(done.code, 0, done.out);
    assert.match(
      done.summary,
      /the page's own audit trail \(file driver\), which keeps the newest transitions only; run this check on every push/,
    );
  });
});
