import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createFencingTeam, type CliResult, type FencingTeam, type TeamMember } from '../helpers/fencingFixture';

/**
 * Issue #24: the committed `.lockstep.json` is checked by a strict schema in every command and in
 * the client guard, is read only as a small regular file, and the server guard's pinned settings
 * are reported when they go stale. Real clones, a real bare remote with the server guard, the
 * built CLI, and git running the hooks. Each process is bounded by its finishing (a hang is a
 * failure through the fixture's deadline), never by a timing assertion.
 */

const SETTINGS = '.lockstep.json';

function configError(result: CliResult, setting: RegExp, what: string): void {
  assert.equal(result.code, 2, `${what}: exit 2 (configuration)\n${result.stdout}${result.stderr}`);
  assert.equal(result.json.error.code, 'configuration', what);
  assert.match(result.json.error.message, setting, what);
}

describe('settings: the strict schema, bounded reads and stale pinned settings (real git)', function () {
  this.timeout(300_000);
  let team: FencingTeam;
  let alice: TeamMember, bob: TeamMember;
  let committed: string;

  before(async () => {
    team = await createFencingTeam({ members: ['alice', 'bob'] });
    [alice, bob] = team.members;
    committed = fs.readFileSync(path.join(bob.dir, SETTINGS), 'utf8');
  });
  after(() => team?.dispose());

  /** Bob's working copy of the settings, changed; restored from git after each test. */
  const writeSettings = (change: (settings: Record<string, unknown>) => Record<string, unknown>) =>
    fs.writeFileSync(path.join(bob.dir, SETTINGS), `${JSON.stringify(change(JSON.parse(committed)), null, 2)}\n`);
  afterEach(async () => {
    fs.rmSync(path.join(bob.dir, SETTINGS), { force: true });
    await team.gitOk(bob.dir, 'checkout', '--', SETTINGS);
    await team.gitOk(bob.dir, 'reset', '--quiet', '--hard', 'origin/main');
  });

  /** Bob pushes a new commit to main through his pre-push hook: refused, and main is where it was. */
  async function pushRefusedByClientGuard(why: RegExp, what: string): Promise<void> {
    const before = team.remoteSha('main');
    await team.gitOk(bob.dir, 'commit', '--quiet', '--allow-empty', '-m', what);
    const pushed = await team.git(bob.dir, ['push', 'origin', 'HEAD:refs/heads/main']);
    assert.notEqual(pushed.code, 0, `${what}: the push is refused`);
    assert.match(pushed.stderr, why, `${what}: the client guard says why`);
    assert.doesNotMatch(pushed.stderr, /remote:/, `${what}: refused before anything reached the remote`);
    assert.equal(team.remoteSha('main'), before, `${what}: main did not move`);
  }

  it('a misspelt key (protectedBranch) is exit 2 in status and acquire, and the client guard refuses a protected push instead of passing it', async () => {
    writeSettings(({ protectedBranches, ...rest }) => ({ ...rest, protectedBranch: protectedBranches }));
    for (const args of [['status'], ['acquire'], ['doctor']]) {
      const result = await team.lockstep(bob.dir, args);
      if (args[0] === 'doctor') {
        assert.equal(result.code, 1);
        assert.match(
          JSON.stringify(result.json.findings),
          /"protectedBranch\\" is not a setting Lockstep knows \(did you mean protectedBranches\?\)/,
        );
      } else configError(result, /"protectedBranch" is not a setting Lockstep knows \(did you mean protectedBranches\?\)/, args[0]!);
    }
    await pushRefusedByClientGuard(/protectedBranch" is not a setting/, 'a push to main with a misspelt key');
  });

  it('option-shaped and path-shaped names are exit 2 before git sees them (remote, gitRemote, a branch, the prefix)', async () => {
    const marker = path.join(team.root, 'pwned');
    const cases: [string, (s: Record<string, unknown>) => Record<string, unknown>, RegExp][] = [
      ['remote --upload-pack', s => ({ ...s, remote: `--upload-pack=touch ${marker}` }), /remote must be the name of a remote/],
      ['remote as a committed bare repository', s => ({ ...s, remote: 'tools/cache.git' }), /remote must be the name of a remote/],
      ['gitRemote as a path', s => ({ ...s, gitRemote: './tools/cache.git' }), /gitRemote must be the name of a remote/],
      ['gitRemote as an option', s => ({ ...s, gitRemote: '--receive-pack=sh' }), /gitRemote must be the name of a remote/],
      ['a protected branch -f', s => ({ ...s, protectedBranches: ['main', '-f'] }), /protectedBranches \(entry 2\) must be a branch name/],
      ['the prefix -x', s => ({ ...s, prefix: '-x' }), /prefix must be at most 200 characters/],
    ];
    for (const [what, change, why] of cases) {
      writeSettings(change);
      for (const args of [['status'], ['release'], ['petition']])
        configError(await team.lockstep(bob.dir, args), why, `${what}: ${args[0]}`);
    }
    assert.equal(fs.existsSync(marker), false, 'nothing committed ran');
  });

  it('init --remote takes a remote name only, never a path or a URL (exit 2, nothing written)', async () => {
    const fresh = path.join(team.root, 'fresh');
    await team.gitOk(team.root, 'init', '--quiet', fresh);
    await team.gitOk(fresh, 'remote', 'add', 'origin', team.remote);
    for (const remote of ['./elsewhere.git', team.remote, 'file:///tmp/x.git', '-x', '.origin']) {
      configError(
        await team.lockstep(fresh, ['init', `--remote=${remote}`]),
        /must be the name of one of this clone's remotes/,
        `init --remote ${remote}`,
      );
      assert.equal(fs.existsSync(path.join(fresh, SETTINGS)), false);
    }
  });

  it('.lockstep.json as a symbolic link to /dev/zero: status is exit 2 and the push is refused, instead of hanging', async () => {
    fs.rmSync(path.join(bob.dir, SETTINGS));
    fs.symlinkSync('/dev/zero', path.join(bob.dir, SETTINGS));
    configError(await team.lockstep(bob.dir, ['status'], { timeoutMs: 120_000 }), /is a symbolic link/, 'status');
    await pushRefusedByClientGuard(/is a symbolic link/, 'a push with the settings linked to /dev/zero');
  });

  it('a 1.7 MB .lockstep.json is refused by the CLI and by the hook, unread', async () => {
    writeSettings(s => ({ ...s, notes: 'x'.repeat(1_700_000) }));
    configError(await team.lockstep(bob.dir, ['status'], { timeoutMs: 120_000 }), /larger than 64 KiB/, 'status');
    await pushRefusedByClientGuard(/larger than 64 KiB/, 'a push with a 1.7 MB settings file');
  });

  it('control: with the committed settings, the holder lands through both guards and the others are fenced as before', async () => {
    assert.equal((await team.lockstep(bob.dir, ['status'])).code, 0);
    assert.equal((await team.lockstep(alice.dir, ['acquire'])).code, 0);
    await team.gitOk(alice.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
    const sha = await team.commit(alice, 'control.txt');
    const pushed = await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']);
    assert.equal(pushed.code, 0, pushed.stderr);
    assert.equal(team.remoteSha('main'), sha);
    await pushRefusedByClientGuard(/grant|lock/i, 'bob, who does not hold the lock');
    assert.equal((await team.lockstep(alice.dir, ['release'])).code, 0);
  });

  describe('stale pinned settings (the server guard keeps deciding with what was pinned)', () => {
    it('doctor and hooks status --server say nothing while the committed settings match', async () => {
      const status = await team.lockstep(team.remote, ['hooks', 'status', '--server']);
      assert.equal(status.code, 0, status.stderr);
      assert.equal(status.json.stale, null);
      const doctor = await team.lockstep(bob.dir, ['doctor']);
      assert.ok(!doctor.json.findings.some((f: { check: string }) => f.check === 'server-settings'), JSON.stringify(doctor.json.findings));
    });

    it('after protectedBranches and operators change on main: doctor and hooks status --server warn, and the guard warns the pusher without changing its decision', async () => {
      // The holder lands the change of settings (the server guard needs the grant's proof for main).
      assert.equal((await team.lockstep(alice.dir, ['acquire'])).code, 0);
      await team.gitOk(alice.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
      const file = path.join(alice.dir, SETTINGS);
      const settings = JSON.parse(fs.readFileSync(file, 'utf8'));
      fs.writeFileSync(
        file,
        `${JSON.stringify({ ...settings, protectedBranches: ['main', 'release'], operators: [...settings.operators, 'new-op@example.com'] }, null, 2)}\n`,
      );
      await team.gitOk(alice.dir, 'commit', '--quiet', '-am', 'protect release too');
      const landed = await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']);
      assert.equal(landed.code, 0, landed.stderr);

      const status = await team.lockstep(team.remote, ['hooks', 'status', '--server']);
      assert.equal(status.code, 0, status.stderr);
      assert.match(
        status.json.stale,
        /pinned settings are stale: \.lockstep\.json on main differs from them in protectedBranches, operators; .*hooks install --server/,
      );
      const human = await team.lockstep(team.remote, ['hooks', 'status', '--server'], { json: false });
      assert.match(human.stdout, /warning: The server guard's pinned settings are stale/);

      await team.gitOk(bob.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
      const doctor = await team.lockstep(bob.dir, ['doctor']);
      const finding = doctor.json.findings.find((f: { check: string }) => f.check === 'server-settings');
      assert.equal(finding?.level, 'warning', JSON.stringify(doctor.json.findings));
      assert.match(finding.found, /protectedBranches, operators/);
      assert.match(finding.fix, /lockstep hooks install --server/);

      // The guard still decides with the pinned settings: the holder's push lands, with a warning line.
      const sha = await team.commit(alice, 'after-change.txt');
      const again = await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(team.remoteSha('main'), sha);
      assert.match(again.stderr, /remote: lockstep: warning: The server guard's pinned settings are stale/);
      // …and a push without the proof is refused as before, with the same warning.
      await team.gitOk(bob.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
      await team.gitOk(bob.dir, 'commit', '--quiet', '--allow-empty', '-m', 'no proof');
      const refused = await team.git(bob.dir, ['push', '--no-verify', 'origin', 'HEAD:refs/heads/main']);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /carries no proof/);
      assert.match(refused.stderr, /remote: lockstep: warning: The server guard's pinned settings are stale/);
      assert.equal(team.remoteSha('main'), sha);
      assert.equal((await team.lockstep(alice.dir, ['release'])).code, 0);

      // Pinned again: the warning is gone.
      assert.equal((await team.lockstep(team.remote, ['hooks', 'install', '--server'])).code, 0);
      assert.equal((await team.lockstep(team.remote, ['hooks', 'status', '--server'])).json.stale, null);
    });
  });
});
