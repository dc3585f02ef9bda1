import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createFencingTeam, refusedByClient, type CliResult, type FencingTeam, type TeamMember } from '../helpers/fencingFixture';

/**
 * The holder's proof of grant goes to the shared remote only, however git is spelt or configured
 * (issue 24, items 6 and 7). A team behind `git daemon`, guarded at both ends; alice holds the lock,
 * so her pushes carry the live proof. Each attack is a push that would hand the proof to another
 * repository — a teammate's fork, served by the same daemon, whose pre-receive hook writes down every
 * push option it receives — or into a push certificate the shared remote stores (it advertises
 * signed pushes, and alice can sign with an SSH key). Each is refused by alice's client guard, the
 * fork hears no proof, the remote stores none, and main does not move; the controls show the
 * holder's ordinary pushes still go through.
 */
describe('the proof of grant goes to the shared remote only (client guard, git daemon)', function () {
  this.timeout(240_000);
  let team: FencingTeam;
  let alice: TeamMember, bob: TeamMember;
  let forkUrl: string;
  /** What the fork's pre-receive hook heard: one line per push, its push options. */
  let heard: string;

  const ok = (result: CliResult, what: string): void => {
    assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
  };
  const heardByFork = () => (fs.existsSync(heard) ? fs.readFileSync(heard, 'utf8') : '');
  /** A bare repository beside the shared remote, served by the same daemon, that writes down the push options it receives. */
  async function listeningRepository(name: string, log: string): Promise<string> {
    const dir = path.join(team.root, `${name}.git`);
    await team.gitOk(team.root, 'init', '--quiet', '--bare', '--initial-branch=main', dir);
    await team.gitOk(dir, 'config', 'receive.advertisePushOptions', 'true');
    fs.writeFileSync(
      path.join(dir, 'hooks', 'pre-receive'),
      `#!/bin/sh\ncat >/dev/null\ni=0\nline="count=\${GIT_PUSH_OPTION_COUNT:-0}"\nwhile [ "$i" -lt "\${GIT_PUSH_OPTION_COUNT:-0}" ]; do eval "line=\\"$line \\$GIT_PUSH_OPTION_$i\\""; i=$((i + 1)); done\necho "$line" >> '${log}'\n`,
      { mode: 0o755 },
    );
    return team.remoteUrl.replace(/remote\.git$/, `${name}.git`);
  }
  /** The push was refused by alice's guard as a leak, the fork heard no proof, the remote stores none, main did not move. */
  async function refusedAsLeak(attack: () => Promise<CliResult>, pattern: RegExp, what: string): Promise<void> {
    const main = team.remoteSha('main');
    const stderr = refusedByClient(await attack(), what);
    assert.match(stderr, pattern, what);
    assert.equal(team.remoteSha('main'), main, `${what}: main did not move`);
    assertNoProofOutside();
  }
  /** No proof or token in what the fork heard, in any object of the fork or the shared remote, or in any output. */
  function assertNoProofOutside(): void {
    const secrets = team.secrets();
    assert.ok(secrets.length > 0);
    for (const repo of [path.join(team.root, 'fork.git'), team.remote]) {
      if (!fs.existsSync(repo)) continue;
      // Loose and packed objects, push certificates included (a certificate is stored as a blob).
      const blobs = execFileSync('git', ['-C', repo, 'cat-file', '--batch-all-objects', '--batch'], {
        env: team.env,
        maxBuffer: 64 << 20,
      }).toString('latin1');
      for (const secret of secrets) assert.ok(!blobs.includes(secret), `no object of ${path.basename(repo)} holds a proof`);
    }
    for (const secret of secrets) assert.ok(!heardByFork().includes(secret), 'the fork heard no proof');
    team.assertNoSecretLeaked();
  }
  /**
   * A pre-push hook that runs the guard on every push, as the installed hook does once its sh pre-check
   * sends the push to Node. The pre-check (src/core/hooks/hookScripts.ts, not this change's) still
   * skips a work tree without .lockstep.json and a linked worktree's pushes; these tests judge the guard.
   */
  function guardOnEveryPush(who: TeamMember): () => void {
    const hook = path.join(who.dir, '.git', 'hooks', 'pre-push');
    const installed = fs.readFileSync(hook, 'utf8');
    fs.writeFileSync(
      hook,
      `#!/bin/sh\nLOCKSTEP_GIT_PUSH_PID=$PPID\nexport LOCKSTEP_GIT_PUSH_PID\nexec '${process.execPath}' '${team.cli}' guard pre-push "$@"\n`,
      { mode: 0o755 },
    );
    return () => fs.writeFileSync(hook, installed, { mode: 0o755 });
  }

  before(async () => {
    team = await createFencingTeam({ members: ['alice', 'bob'], transport: 'daemon' });
    [alice, bob] = team.members;
    heard = path.join(team.root, 'fork-heard');
    forkUrl = await listeningRepository('fork', heard);
    for (const who of [alice, bob]) await team.gitOk(who.dir, 'remote', 'add', 'fork', forkUrl);
    // The shared remote stores signed pushes' certificates; alice can sign (SSH key, no agent, no passphrase).
    await team.gitOk(team.remote, 'config', 'receive.certNonceSeed', 'lockstep-test-seed');
    const key = path.join(team.root, 'alice-signing-key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'alice', '-f', key]);
    await team.gitOk(alice.dir, 'config', 'gpg.format', 'ssh');
    await team.gitOk(alice.dir, 'config', 'user.signingKey', key);
    const acquired = await team.lockstep(alice.dir, ['acquire']);
    ok(acquired, 'alice acquires');
    assert.ok(
      (await team.pushOptions(alice)).some(o => o.startsWith('lockstep-proof=')),
      "alice's pushes carry the proof",
    );
    await team.commit(alice, 'a1.txt');
  });
  after(() => team?.dispose());

  it('control: the holder lands on main, pushes an unprotected branch to the shared remote, and pushes to the fork the way the refusal says', async () => {
    ok(await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']), 'alice lands');
    assert.equal(team.remoteSha('main'), await team.gitOk(alice.dir, 'rev-parse', 'HEAD'));
    ok(await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/feature']), 'an unprotected branch to the shared remote');
    ok(await team.git(alice.dir, ['-c', 'push.pushOption=', 'push', 'fork', 'HEAD:refs/heads/feature']), 'the fork, without the proof');
    ok(await team.git(bob.dir, ['push', 'fork', 'HEAD:refs/heads/bob']), 'bob holds nothing: his pushes go anywhere');
    // Another name for the shared remote's own URL, and a pushurl that is that same URL, are the shared remote.
    await team.gitOk(alice.dir, 'remote', 'add', 'mirror', team.remoteUrl);
    ok(await team.git(alice.dir, ['push', 'mirror', 'HEAD:refs/heads/by-mirror']), 'the shared remote under another name');
    await team.gitOk(alice.dir, 'config', 'remote.origin.pushurl', team.remoteUrl);
    ok(await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/by-pushurl']), "a pushurl that is the shared remote's URL");
    await team.gitOk(alice.dir, 'config', '--unset', 'remote.origin.pushurl');
    assert.ok(
      heardByFork()
        .split('\n')
        .filter(Boolean)
        .every(line => line === 'count=0'),
      'the fork heard no push option at all',
    );
    assertNoProofOutside();
  });

  it('6a. a push to the fork from a branch without .lockstep.json is refused', async () => {
    const restore = guardOnEveryPush(alice);
    try {
      await team.gitOk(alice.dir, 'checkout', '--quiet', '-b', 'no-container');
      await team.gitOk(alice.dir, 'rm', '--quiet', '.lockstep.json');
      await team.gitOk(alice.dir, 'commit', '--quiet', '-m', 'a branch that is no container');
      await refusedAsLeak(
        () => team.git(alice.dir, ['push', 'fork', 'no-container']),
        /This push goes to fork, not the container's shared remote/,
        'from a branch without .lockstep.json',
      );
      ok(await team.git(alice.dir, ['-c', 'push.pushOption=', 'push', 'fork', 'no-container']), 'control: without the proof it goes');
    } finally {
      await team.gitOk(alice.dir, 'checkout', '--quiet', 'main');
      restore();
    }
  });

  it('6b. a push to the fork from a linked worktree is refused (the proof is configured in the common git dir)', async () => {
    const restore = guardOnEveryPush(alice);
    const worktree = path.join(team.root, 'alice-worktree');
    try {
      await team.gitOk(alice.dir, 'worktree', 'add', '--quiet', '-b', 'in-worktree', worktree);
      await refusedAsLeak(
        () => team.git(worktree, ['push', 'fork', 'in-worktree']),
        /This push goes to fork, not the container's shared remote/,
        'from a linked worktree',
      );
      ok(await team.git(worktree, ['push', 'origin', 'in-worktree']), 'control: the shared remote, from the worktree');
    } finally {
      await team.gitOk(alice.dir, 'worktree', 'remove', '--force', worktree);
      restore();
    }
  });

  it('6c. origin with a pushurl pointing at the fork is refused', async () => {
    await team.gitOk(alice.dir, 'config', 'remote.origin.pushurl', forkUrl);
    try {
      await refusedAsLeak(
        () => team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']),
        /This push of origin goes to another URL than the one origin is fetched from/,
        'pushurl',
      );
    } finally {
      await team.gitOk(alice.dir, 'config', '--unset', 'remote.origin.pushurl');
    }
  });

  it("6c. a pushInsteadOf that turns the shared remote's URL into the fork's is refused", async () => {
    await team.gitOk(alice.dir, 'config', `url.${forkUrl}.pushInsteadOf`, team.remoteUrl);
    try {
      await refusedAsLeak(
        () => team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']),
        /This push of origin goes to another URL/,
        'pushInsteadOf',
      );
    } finally {
      await team.gitOk(alice.dir, 'config', '--remove-section', `url.${forkUrl}`);
    }
  });

  for (const [what, before, after] of [
    ['--sign', [], ['--sign']],
    ['--signed=on', [], ['--signed=on']],
    ['-c push.gpgSign=1', ['-c', 'push.gpgSign=1'], []],
  ] as const) {
    it(`7. a signed push spelt ${what} is refused (the certificate would hold the proof)`, async () => {
      await refusedAsLeak(
        () => team.git(alice.dir, [...before, 'push', ...after, 'origin', 'HEAD:refs/heads/main']),
        /A signed push stores its push options/,
        what,
      );
    });
  }

  it("7. push.gpgSign=yes in the clone's configuration is refused; --no-signed pushes", async () => {
    await team.gitOk(alice.dir, 'config', 'push.gpgSign', 'yes');
    try {
      await refusedAsLeak(
        () => team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']),
        /A signed push stores its push options/,
        'push.gpgSign=yes',
      );
      await team.commit(alice, 'a2.txt');
      ok(await team.git(alice.dir, ['push', '--no-sig', 'origin', 'HEAD:refs/heads/main']), 'control: --no-signed (abbreviated) lands');
      assert.equal(team.remoteSha('main'), await team.gitOk(alice.dir, 'rev-parse', 'HEAD'));
    } finally {
      await team.gitOk(alice.dir, 'config', '--unset', 'push.gpgSign');
    }
    assertNoProofOutside();
  });

  it("7. --recurse-sub=on-demand is refused before the submodule's remote hears the proof", async () => {
    const subHeard = path.join(team.root, 'sub-heard');
    const subUrl = await listeningRepository('sub', subHeard);
    const seed = path.join(team.root, 'sub-seed');
    await team.gitOk(team.root, 'clone', '--quiet', subUrl, seed);
    await team.gitOk(seed, 'config', 'user.email', 'seed@example.com');
    await team.gitOk(seed, 'commit', '--quiet', '--allow-empty', '-m', 'sub first');
    await team.gitOk(seed, 'push', '--quiet', 'origin', 'HEAD:refs/heads/main');
    const subPushes = () => fs.readFileSync(subHeard, 'utf8');
    const before = subPushes();
    await team.gitOk(alice.dir, 'checkout', '--quiet', '-b', 'with-submodule');
    try {
      await team.gitOk(alice.dir, 'submodule', '--quiet', 'add', subUrl, 'sub');
      const sub = path.join(alice.dir, 'sub');
      await team.gitOk(sub, 'config', 'user.email', alice.identity);
      await team.gitOk(sub, 'commit', '--quiet', '--allow-empty', '-m', 'unpushed in the submodule');
      await team.gitOk(alice.dir, 'add', 'sub');
      await team.gitOk(alice.dir, 'commit', '--quiet', '-m', 'with a submodule');
      await refusedAsLeak(
        () => team.git(alice.dir, ['push', '--recurse-sub=on-demand', 'origin', 'HEAD:refs/heads/with-submodule']),
        /to the submodules' pushes/,
        '--recurse-sub=on-demand',
      );
      for (const secret of team.secrets()) assert.ok(!subPushes().includes(secret), "the submodule's remote heard no proof");
      assert.equal(subPushes(), before, 'the submodule was not pushed');
    } finally {
      await team.gitOk(alice.dir, 'checkout', '--quiet', '--force', 'main');
    }
  });
});

/**
 * The git driver writes the lock ref with its own `git push --no-verify` (the server guard needs the holder's
 * proof on it, so it carries the push options), which skips the client guard. A teammate who can push a
 * branch commits a `.lockstep.json` there whose `gitRemote` names a fork of theirs (every clone has some remote
 * beside origin: a fork, an upstream), with a copy of the page in it; the holder checks that branch out.
 * Before the fix, her heartbeat there wrote the copy in the fork (the real lease ran out while her badge said
 * she held it) and carried her live proof to the fork, whose owner landed on main with it. Now a grant is
 * pinned to the page it was taken on: nothing is read or written on another while it lasts.
 */
describe("a branch's .lockstep.json naming a fork as gitRemote gets neither the holder's writes nor her proof", function () {
  this.timeout(240_000);
  let team: FencingTeam;
  let alice: TeamMember, bob: TeamMember;
  let heard: string, forkDir: string, lockRef: string;
  const heardByFork = () => (fs.existsSync(heard) ? fs.readFileSync(heard, 'utf8') : '');
  const forkPage = async () => (await team.git(forkDir, ['rev-parse', '--verify', '--quiet', lockRef])).stdout.trim();

  before(async () => {
    team = await createFencingTeam({ members: ['alice', 'bob'], driver: 'git', transport: 'daemon' });
    [alice, bob] = team.members;
    heard = path.join(team.root, 'fork-heard');
    forkDir = path.join(team.root, 'fork.git');
    await team.gitOk(team.root, 'init', '--quiet', '--bare', '--initial-branch=main', forkDir);
    await team.gitOk(forkDir, 'config', 'receive.advertisePushOptions', 'true');
    fs.writeFileSync(
      path.join(forkDir, 'hooks', 'pre-receive'),
      `#!/bin/sh\ncat >/dev/null\ni=0\nwhile [ "$i" -lt "\${GIT_PUSH_OPTION_COUNT:-0}" ]; do eval "echo \\"\\$GIT_PUSH_OPTION_$i\\"" >> '${heard}'; i=$((i + 1)); done\n`,
      { mode: 0o755 },
    );
    const forkUrl = team.remoteUrl.replace(/remote\.git$/, 'fork.git');
    const acquired = await team.lockstep(alice.dir, ['acquire']);
    assert.equal(acquired.code, 0, acquired.stdout + acquired.stderr);

    // Bob's branch names his fork as the page's remote, and his fork holds a copy of the page.
    await team.gitOk(bob.dir, 'checkout', '--quiet', '-b', 'feat');
    const settingsFile = path.join(bob.dir, '.lockstep.json');
    const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
    settings.gitRemote = 'fork';
    fs.writeFileSync(settingsFile, `${JSON.stringify(settings, null, 2)}\n`);
    await team.gitOk(bob.dir, 'commit', '--quiet', '-am', 'the page lives in the fork now');
    await team.gitOk(bob.dir, 'push', '--quiet', 'origin', 'feat');
    lockRef = (await team.gitOk(bob.dir, 'ls-remote', 'origin', 'refs/lockstep/*')).split('\t')[1];
    await team.gitOk(bob.dir, 'fetch', '--quiet', 'origin', `+${lockRef}:refs/copied/page`);
    await team.gitOk(bob.dir, 'push', '--quiet', '--no-verify', forkUrl, `refs/copied/page:${lockRef}`);

    await team.gitOk(alice.dir, 'remote', 'add', 'fork', forkUrl);
    await team.gitOk(alice.dir, 'fetch', '--quiet', 'origin');
  });
  after(() => team?.dispose());

  it('on that branch the holder is told her grant is on another page: nothing is read or written there; back on main it is hers', async () => {
    await team.gitOk(alice.dir, 'checkout', '--quiet', 'feat');
    const copy = await forkPage();
    for (const command of [['heartbeat'], ['status'], ['release']]) {
      const result = await team.lockstep(alice.dir, command);
      assert.equal(result.code, 2, `${command[0]}: exit ${result.code}\n${result.stdout}${result.stderr}`);
      assert.match(
        result.stdout + result.stderr,
        /holds grant #1 on another lock page \(git driver at remote origin.*check out the branch your grant was taken on/s,
      );
    }
    assert.equal(await forkPage(), copy, "the fork's copy of the page was not written");
    assert.equal(heardByFork(), '', 'the fork heard no push');
    await team.gitOk(alice.dir, 'checkout', '--quiet', 'main');
    const status = await team.lockstep(alice.dir, ['--json', 'status']);
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.equal(JSON.parse(status.stdout).state, 'held-by-me');
    // Her steps on the real page still carry her proof to the shared remote, as its server guard asks.
    for (const command of [['heartbeat'], ['release']]) {
      const result = await team.lockstep(alice.dir, command);
      assert.equal(result.code, 0, `${command[0]} past the server guard: ${result.stdout}${result.stderr}`);
    }
  });
});
