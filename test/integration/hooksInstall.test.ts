import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CHAINED_SUFFIX, HOOK_MARKER } from '../../src/core/hooks/hookScripts';
import { installClientHooks, repairClientHook } from '../../src/core/hooks/install';
import { createFencingTeam, DIST_CLI, type CliResult, type FencingTeam, type TeamMember } from '../helpers/fencingFixture';

/**
 * `lockstep hooks install [--server]` with real git: where the hooks go (core.hooksPath), what
 * happens to hooks that were there before (chained, run first, still able to stop a push), that a
 * second install changes nothing, and that the hooks run when node is not on git's PATH.
 */

function ok(result: CliResult, what: string): any {
  assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
  return result.json;
}

const mode = (file: string) => fs.statSync(file).mode & 0o777;

describe('lockstep hooks install (real git)', function () {
  this.timeout(120_000);
  let team: FencingTeam;
  let alice: TeamMember, bob: TeamMember, carol: TeamMember;
  const push = (who: TeamMember, options: { env?: Record<string, string>; extra?: string[] } = {}) =>
    team.git(who.dir, ['push', ...(options.extra ?? []), 'origin', 'HEAD:refs/heads/main'], options.env ? { env: options.env } : {});

  before(async () => {
    // The clones start without hooks: each test installs what it examines.
    team = await createFencingTeam({ members: ['alice', 'bob', 'carol'], clientHooks: false });
    [alice, bob, carol] = team.members;
  });
  after(() => team?.dispose());

  describe('--server, in the shared bare repository', () => {
    it('wrote pre-receive (embedding node, dist/cli.js and the pinned settings), lockstep-server.json (0600) and receive.advertisePushOptions', async () => {
      const hook = path.join(team.remote, 'hooks', 'pre-receive');
      const text = fs.readFileSync(hook, 'utf8');
      assert.equal(mode(hook), 0o755);
      assert.ok(text.includes(HOOK_MARKER));
      assert.ok(text.includes(`'${DIST_CLI}'`), 'the absolute path of the CLI that installed it');
      assert.ok(text.includes(`'${process.execPath}'`), 'the node that ran the install');
      assert.equal(await team.gitOk(team.remote, 'config', 'receive.advertisePushOptions'), 'true');
      const pinned = path.join(team.remote, 'hooks', 'lockstep-server.json');
      assert.ok(text.includes(`--settings '${pinned}'`));
      assert.equal(mode(pinned), 0o600);
      const settings = JSON.parse(fs.readFileSync(pinned, 'utf8'));
      assert.equal(settings.file.container, team.container, "the container of main's committed .lockstep.json");
      assert.deepEqual(settings.file.protectedBranches, ['main']);
      assert.equal(settings.requireProof, true, 'the committed serverGuard');
      assert.deepEqual(settings.store, { path: team.store }, "the installing shell's LOCKSTEP_PATH");
      assert.equal(settings.pinnedFrom.branch, 'main');
      assert.equal(settings.pinnedFrom.commit, team.remoteSha());
      assert.ok(!fs.existsSync(path.join(team.remote, 'hooks', 'lockstep.env')), 'no environment file: the guard reads no variables');
    });

    it('a second install updates in place: same text, nothing chained, and no identity saved from the shell', async () => {
      const hook = path.join(team.remote, 'hooks', 'pre-receive');
      const before = fs.readFileSync(hook, 'utf8');
      const again = ok(
        await team.lockstep(team.remote, ['hooks', 'install', '--server'], { env: { LOCKSTEP_IDENTITY: 'ops@example.com' } }),
        'install --server again',
      );
      assert.equal(again.hook, hook);
      assert.equal(again.chained, null);
      assert.equal(again.updated, true);
      assert.equal(fs.readFileSync(hook, 'utf8'), before);
      assert.ok(!fs.existsSync(hook + CHAINED_SUFFIX));
      assert.doesNotMatch(
        fs.readFileSync(path.join(team.remote, 'hooks', 'lockstep-server.json'), 'utf8'),
        /IDENTITY|ops@example\.com"?\s*[,}]\s*$/m,
      );
    });

    it('hooks status --server prints the pinned settings, never a password', async () => {
      const saved = fs.readFileSync(path.join(team.remote, 'hooks', 'lockstep-server.json'), 'utf8');
      try {
        ok(
          await team.lockstep(team.remote, ['hooks', 'install', '--server'], {
            env: { LOCKSTEP_REDIS_URL: 'redis://user:s3cret-pass@127.0.0.1:6390/0' },
          }),
          'install with a credential',
        );
        const shown = await team.lockstep(team.remote, ['hooks', 'status', '--server'], { json: false });
        assert.equal(shown.code, 0, shown.stderr);
        assert.match(shown.stdout, new RegExp(`container ${team.container}`));
        assert.match(shown.stdout, /protected branches: main/);
        assert.match(shown.stdout, /redis redis:\/\/\*\*\*@127\.0\.0\.1:6390\/0/);
        assert.doesNotMatch(shown.stdout + shown.stderr, /s3cret-pass/);
      } finally {
        fs.writeFileSync(path.join(team.remote, 'hooks', 'lockstep-server.json'), saved, { mode: 0o600 });
      }
    });

    it('is refused where main has no readable .lockstep.json: nothing is installed on guessed settings', async () => {
      const bare = path.join(team.root, 'unset.git');
      await team.gitOk(team.root, 'init', '--quiet', '--bare', '--initial-branch=main', bare);
      const empty = await team.lockstep(bare, ['hooks', 'install', '--server']);
      assert.equal(empty.code, 2);
      assert.match(empty.json.error.message, /The branch main does not exist in this repository/);
      ok(await team.git(alice.dir, ['push', '--no-verify', bare, 'HEAD:refs/heads/main']), 'main with .lockstep.json');
      // A symbolic link committed in its place (clients would follow it) is refused too.
      const work = path.join(team.root, 'unset-work');
      await team.gitOk(team.root, 'clone', '--quiet', bare, work);
      await team.gitOk(work, 'config', 'user.email', 'x@example.com');
      fs.rmSync(path.join(work, '.lockstep.json'));
      fs.symlinkSync('README.md', path.join(work, '.lockstep.json'));
      await team.gitOk(work, 'commit', '--quiet', '-am', 'link');
      await team.gitOk(work, 'push', '--quiet', 'origin', 'HEAD:refs/heads/linked');
      const linked = await team.lockstep(bare, ['hooks', 'install', '--server', '--branch', 'linked']);
      assert.equal(linked.code, 2);
      assert.match(linked.json.error.message, /\.lockstep\.json on linked is not a regular file/);
      assert.ok(!fs.existsSync(path.join(bare, 'hooks', 'pre-receive')));
    });

    it('hooks install without --server in a bare repository is an error that says to add --server', async () => {
      const refused = await team.lockstep(team.remote, ['hooks', 'install']);
      assert.equal(refused.code, 2);
      assert.match(refused.json.error.message, /This is a bare repository .*Run lockstep hooks install --server here/);
      assert.ok(!fs.existsSync(path.join(team.remote, 'hooks', 'pre-push')));
    });

    it('is refused in a clone (exit 2): the server hook belongs in the bare remote', async () => {
      const refused = await team.lockstep(alice.dir, ['hooks', 'install', '--server']);
      assert.equal(refused.code, 2);
      assert.match(
        refused.json.error.message,
        /hooks install --server belongs in the shared bare repository \(the remote\), not in a clone\./,
      );
      assert.ok(!fs.existsSync(path.join(alice.dir, '.git', 'hooks', 'pre-receive')));
    });

    it('chains a pre-receive hook that was there before: it still runs, and its refusal still stands', async () => {
      const other = path.join(team.root, 'other.git');
      await team.gitOk(team.root, 'init', '--quiet', '--bare', '--initial-branch=main', other);
      const marker = path.join(team.root, 'other-marker');
      fs.writeFileSync(
        path.join(other, 'hooks', 'pre-receive'),
        `#!/bin/sh\ncat >> '${marker}'\nif [ -f '${marker}.refuse' ]; then echo 'site policy says no' >&2; exit 1; fi\n`,
        { mode: 0o755 },
      );
      ok(await team.git(alice.dir, ['push', '--no-verify', other, 'HEAD:refs/heads/main']), 'main with .lockstep.json first');
      const installed = ok(await team.lockstep(other, ['hooks', 'install', '--server']), 'install --server');
      assert.equal(installed.chained, path.join(other, 'hooks', `pre-receive${CHAINED_SUFFIX}`));
      // (alice's commits carry .lockstep.json, which protects main: an unprotected branch keeps this about chaining.)
      ok(await team.git(alice.dir, ['push', other, 'HEAD:refs/heads/side']), 'push to the other remote');
      assert.match(fs.readFileSync(marker, 'utf8'), / refs\/heads\/side\n$/);
      fs.writeFileSync(`${marker}.refuse`, '');
      const refused = await team.git(alice.dir, ['push', other, 'HEAD:refs/heads/next']);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /remote: site policy says no/);
      assert.equal(
        fs.readFileSync(marker, 'utf8').split('\n').filter(Boolean).length,
        3,
        'it ran once per push (the first before the install)',
      );
    });
  });

  describe('in a clone', () => {
    const marker = () => path.join(team.root, 'alice-marker');
    const refuseFile = () => path.join(team.root, 'alice-refuse');
    const entries = () => fs.readFileSync(marker(), 'utf8').split('--\n').filter(Boolean);

    it('keeps an existing pre-push hook as pre-push.lockstep-chained; a second install does not chain it twice', async () => {
      const hooks = path.join(alice.dir, '.git', 'hooks');
      const userHook = `#!/bin/sh\ninput=$(cat)\nprintf '%s %s\\n%s\\n--\\n' "$1" "$2" "$input" >> '${marker()}'\nif [ -f '${refuseFile()}' ]; then echo 'user hook: not today' >&2; exit 1; fi\n`;
      fs.writeFileSync(path.join(hooks, 'pre-push'), userHook, { mode: 0o755 });
      const first = ok(await team.lockstep(alice.dir, ['hooks', 'install']), 'install');
      assert.deepEqual(first, {
        ok: true,
        hook: path.join(hooks, 'pre-push'),
        chained: path.join(hooks, `pre-push${CHAINED_SUFFIX}`),
        updated: false,
      });
      const ours = fs.readFileSync(path.join(hooks, 'pre-push'), 'utf8');
      assert.ok(ours.includes(HOOK_MARKER));

      const second = ok(await team.lockstep(alice.dir, ['hooks', 'install']), 'install again');
      assert.deepEqual(second, { ...first, updated: true });
      assert.equal(fs.readFileSync(path.join(hooks, 'pre-push'), 'utf8'), ours);
      assert.equal(fs.readFileSync(path.join(hooks, `pre-push${CHAINED_SUFFIX}`), 'utf8'), userHook);
      assert.deepEqual(
        fs
          .readdirSync(hooks)
          .filter(f => f.startsWith('pre-push') && !f.endsWith('.sample'))
          .sort(),
        ['pre-push', `pre-push${CHAINED_SUFFIX}`],
      );
    });

    it("the user's hook runs first, once per push, with git's arguments and refs; then the guard", async () => {
      ok(await team.lockstep(alice.dir, ['acquire']), 'alice acquire');
      const sha = await team.commit(alice, 'a.txt');
      const pushed = await push(alice);
      ok(pushed, 'push');
      assert.match(pushed.stderr, /lockstep: grant #1 verified for main\./);
      assert.equal(team.remoteSha(), sha);
      const seen = entries();
      assert.equal(seen.length, 1, 'the user hook ran exactly once');
      assert.equal(seen[0], `origin ${team.remote}\nHEAD ${sha} refs/heads/main ${await team.gitOk(alice.dir, 'rev-parse', 'HEAD~1')}\n`);
    });

    it("a non-zero exit of the user's hook still blocks the push (and the guard does not run)", async () => {
      const landed = team.remoteSha();
      await team.commit(alice, 'b.txt');
      fs.writeFileSync(refuseFile(), '');
      try {
        const blocked = await push(alice);
        assert.notEqual(blocked.code, 0);
        assert.match(blocked.stderr, /user hook: not today/);
        assert.doesNotMatch(blocked.stderr, /^lockstep:/m);
        assert.equal(team.remoteSha(), landed);
        assert.equal(entries().length, 2);
      } finally {
        fs.rmSync(refuseFile());
      }
      ok(await push(alice), 'the same push once the user hook agrees');
      assert.equal(entries().length, 3);
    });

    it('honours core.hooksPath, relative to the work tree or absolute', async () => {
      await team.gitOk(bob.dir, 'config', 'core.hooksPath', '.githooks');
      assert.equal(ok(await team.lockstep(bob.dir, ['hooks', 'install']), 'install').hook, path.join(bob.dir, '.githooks', 'pre-push'));
      assert.ok(!fs.existsSync(path.join(bob.dir, '.git', 'hooks', 'pre-push')));
      const shared = path.join(team.root, 'shared hooks');
      await team.gitOk(carol.dir, 'config', 'core.hooksPath', shared);
      assert.equal(ok(await team.lockstep(carol.dir, ['hooks', 'install']), 'install').hook, path.join(shared, 'pre-push'));

      for (const who of [bob, carol]) {
        await team.gitOk(who.dir, 'pull', '--quiet', '--ff-only', 'origin', 'main');
        await team.commit(who, `${who.name}.txt`);
        const refused = await push(who);
        assert.notEqual(refused.code, 0, `${who.name}'s hook from core.hooksPath ran`);
        assert.match(
          refused.stderr,
          /lockstep: This clone does not hold the lock; the current grant #1 is held by alice@example\.com, and pushes/,
        );
      }
    });

    it('runs when node is not on PATH (the install-time node), and refuses when that node is gone too', async () => {
      const bin = path.join(team.root, 'bin-without-node');
      fs.mkdirSync(bin);
      for (const tool of ['git', 'sh', 'cat', 'dirname']) {
        fs.symlinkSync(spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim(), path.join(bin, tool));
      }
      const noNode = { PATH: bin };
      assert.notEqual(spawnSync('sh', ['-c', 'command -v node'], { env: noNode }).status, 0, 'node is not on that PATH');

      const sha = await team.commit(alice, 'c.txt');
      const pushed = await push(alice, { env: noNode });
      ok(pushed, 'push without node on PATH');
      assert.match(pushed.stderr, /lockstep: grant #1 verified for main\./, 'the client guard ran');
      assert.equal(team.remoteSha(), sha);
      const refused = await push(bob, { env: noNode, extra: ['--no-verify', '--force'] });
      assert.match(
        refused.stderr,
        /remote: lockstep: refused refs\/heads\/main: This push carries no proof of grant/,
        'the server guard ran too',
      );
      assert.equal(team.remoteSha(), sha);

      // Node moved since the install: the hook refuses and says so; installing again repairs it.
      const hook = path.join(alice.dir, '.git', 'hooks', 'pre-push');
      const text = fs.readFileSync(hook, 'utf8');
      // The install-time binary is run as Node even when it is VS Code's Electron (ELECTRON_RUN_AS_NODE).
      assert.ok(text.includes(`|| { node_bin='${process.execPath}'; ELECTRON_RUN_AS_NODE=1; export ELECTRON_RUN_AS_NODE; }`));
      fs.writeFileSync(
        hook,
        text.replace(`|| { node_bin='${process.execPath}';`, `|| { node_bin='${path.join(team.root, 'gone', 'node')}';`),
      );
      await team.commit(alice, 'd.txt');
      const gone = await push(alice, { env: noNode });
      assert.notEqual(gone.code, 0);
      assert.match(
        gone.stderr,
        /lockstep: node was not found, so the fencing guard cannot run and the push is refused\. Install Node\.js or run lockstep hooks install again\./,
      );
      assert.equal(team.remoteSha(), sha);
      ok(await team.lockstep(alice.dir, ['hooks', 'install']), 'install again');
      ok(await push(alice, { env: noNode }), 'push after reinstalling');
    });

    it("refuses to guess when both pre-push and pre-push.lockstep-chained are someone else's (exit 2)", async () => {
      const hooks = path.join(carol.dir, '.git', 'hooks');
      await team.gitOk(carol.dir, 'config', '--unset', 'core.hooksPath');
      fs.writeFileSync(path.join(hooks, 'pre-push'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      fs.writeFileSync(path.join(hooks, `pre-push${CHAINED_SUFFIX}`), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      const refused = await team.lockstep(carol.dir, ['hooks', 'install']);
      assert.equal(refused.code, 2);
      assert.match(
        refused.json.error.message,
        /Both pre-push and pre-push\.lockstep-chained exist in .*; merge them by hand, then install again\./,
      );
      assert.equal(fs.readFileSync(path.join(hooks, 'pre-push'), 'utf8'), '#!/bin/sh\nexit 0\n', 'nothing was overwritten');
    });

    it('in a repository that is not a container, the client guard lets every push through', async () => {
      const plainRemote = path.join(team.root, 'plain.git');
      const plain = path.join(team.root, 'plain');
      await team.gitOk(team.root, 'init', '--quiet', '--bare', '--initial-branch=main', plainRemote);
      await team.gitOk(team.root, 'clone', '--quiet', plainRemote, plain);
      await team.gitOk(plain, 'config', 'user.email', 'dan@example.com');
      await team.gitOk(plain, 'symbolic-ref', 'HEAD', 'refs/heads/main');
      ok(await team.lockstep(plain, ['hooks', 'install']), 'install');
      fs.writeFileSync(path.join(plain, 'x.txt'), 'x\n');
      await team.gitOk(plain, 'add', 'x.txt');
      await team.gitOk(plain, 'commit', '--quiet', '-m', 'x');
      const pushed = await team.git(plain, ['push', 'origin', 'main']);
      ok(pushed, 'push');
      assert.doesNotMatch(pushed.stderr, /^(remote: )?lockstep:/m);
      assert.equal(await team.gitOk(plainRemote, 'rev-parse', 'main'), await team.gitOk(plain, 'rev-parse', 'HEAD'));
    });

    it('outside any repository is a usage error (exit 2) that says where to run it, not an internal failure', async () => {
      const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-no-repo-'));
      try {
        for (const args of [
          ['hooks', 'install'],
          ['hooks', 'install', '--server'],
        ]) {
          const refused = await team.lockstep(outside, args);
          assert.equal(refused.code, 2, `${args.join(' ')}: ${refused.stdout}${refused.stderr}`);
          assert.equal(refused.json.error.code, 'configuration');
          assert.match(
            refused.json.error.message,
            /^This folder is not inside a git repository, so there is nowhere to install a hook\. Run lockstep hooks install in a clone .*hooks install --server in the shared bare repository\./,
          );
          const human = await team.lockstep(outside, args, { json: false });
          assert.equal(human.code, 2);
          assert.doesNotMatch(human.stderr, /Unexpected failure|internal/);
        }
        assert.deepEqual(fs.readdirSync(outside), [], 'nothing was written');
      } finally {
        fs.rmSync(outside, { recursive: true, force: true });
      }
    });

    it('no owner token or push proof appeared in anything the hooks or the CLI printed', () => {
      team.assertNoSecretLeaked();
    });
  });
});

describe('repairClientHook (the extension after an update)', () => {
  it("rewrites a Lockstep hook whose CLI is gone, and leaves a working one and anyone else's alone", async () => {
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-repair-'));
    try {
      execFileSync('git', ['init', '-q', repo]);
      const hook = path.join(repo, '.git', 'hooks', 'pre-push');
      const current = path.join(repo, 'current-cli.js');
      fs.writeFileSync(current, '');
      assert.equal(await repairClientHook(repo, { node: process.execPath, cli: current }), false, 'no hook: nothing to do');

      await installClientHooks(repo, { node: process.execPath, cli: path.join(repo, "old version's", 'cli.js') });
      assert.equal(await repairClientHook(repo, { node: process.execPath, cli: current }), true, 'the old CLI is gone');
      assert.ok(fs.readFileSync(hook, 'utf8').includes(`'${current}'`));

      const elsewhere = path.join(repo, 'npm-cli.js');
      fs.writeFileSync(elsewhere, '');
      await installClientHooks(repo, { node: process.execPath, cli: elsewhere });
      assert.equal(await repairClientHook(repo, { node: process.execPath, cli: current }), false, 'a working hook is kept');
      assert.ok(fs.readFileSync(hook, 'utf8').includes(`'${elsewhere}'`));

      fs.writeFileSync(hook, '#!/bin/sh\nexit 0\n');
      assert.equal(
        await repairClientHook(repo, { node: process.execPath, cli: current }),
        false,
        "someone else's hook is not ours to touch",
      );
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });
});
