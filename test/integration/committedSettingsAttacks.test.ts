import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createFencingTeam, type CliResult, type FencingTeam, type TeamMember } from '../helpers/fencingFixture';

/**
 * Issue #24, item 1: no committed value runs code. A teammate who can push commits a `.lockstep.json`
 * (and files beside it) on a branch; a teammate who checks that branch out and runs lockstep must
 * not run anything the commit brought — not a hook of a repository carried in the work tree, not an
 * `ext::` command, not a file named where git expects an option's value. Each attack plants a marker
 * that only the attacker's code would write; each is followed by its control (the normal day on the
 * team's real remote still works). The server guard's own environment is attacked too: a pinned PATH
 * without git, and NODE_OPTIONS from a pusher over a local-path remote.
 */

function configurationError(result: CliResult, setting: string, what: string): void {
  assert.equal(result.code, 2, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
  assert.equal(result.json.error.code, 'configuration', what);
  assert.equal(result.json.error.setting, setting, `${what}: ${result.json.error.message}`);
}

function ok(result: CliResult, what: string): any {
  assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
  return result.json;
}

/** Commits `files` (path → text, mode) and a `.lockstep.json` changed by `edit` on BRANCH, and pushes it past every client hook. */
async function publish(
  team: FencingTeam,
  who: TeamMember,
  branch: string,
  edit: (file: any) => void,
  files: Record<string, { text: string; mode?: number }> = {},
): Promise<void> {
  await team.gitOk(who.dir, 'checkout', '--quiet', '-B', branch, 'origin/main');
  const settings = JSON.parse(fs.readFileSync(path.join(who.dir, '.lockstep.json'), 'utf8'));
  edit(settings);
  // Written as text, past any schema: what a teammate can commit.
  fs.writeFileSync(path.join(who.dir, '.lockstep.json'), `${JSON.stringify(settings, null, 2)}\n`);
  for (const [name, file] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(who.dir, name)), { recursive: true });
    fs.writeFileSync(path.join(who.dir, name), file.text, { mode: file.mode ?? 0o644 });
  }
  await team.gitOk(who.dir, 'add', '--all');
  await team.gitOk(who.dir, 'commit', '--quiet', '-m', `tooling: ${branch}`);
  await team.gitOk(who.dir, 'push', '--quiet', '--no-verify', '--force', 'origin', `HEAD:refs/heads/${branch}`);
  await team.gitOk(who.dir, 'checkout', '--quiet', 'main');
}

/** The victim checks the attacker's branch out (as a reviewer would), runs `body`, and goes back to main. */
async function onBranch(team: FencingTeam, who: TeamMember, branch: string, body: () => Promise<void>): Promise<void> {
  await team.gitOk(who.dir, 'fetch', '--quiet', 'origin', `+refs/heads/${branch}:refs/remotes/origin/${branch}`);
  await team.gitOk(who.dir, 'checkout', '--quiet', '-B', branch, `origin/${branch}`);
  try {
    await body();
  } finally {
    await team.gitOk(who.dir, 'checkout', '--quiet', '--force', 'main');
  }
}

/** The holder's normal day: acquire, commit, push through both guards, release. */
async function normalDay(team: FencingTeam, who: TeamMember, file: string): Promise<void> {
  await team.gitOk(who.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
  ok(await team.lockstep(who.dir, ['acquire']), `${who.name} acquires`);
  const sha = await team.commit(who, file);
  ok(await team.git(who.dir, ['push', 'origin', 'HEAD:refs/heads/main']), `${who.name} lands`);
  assert.equal(team.remoteSha(), sha);
  ok(await team.lockstep(who.dir, ['release']), `${who.name} releases`);
}

describe('committed settings never run code (git driver, remote behind git daemon)', function () {
  this.timeout(300_000);
  let team: FencingTeam;
  let alice: TeamMember, bob: TeamMember;

  before(async () => {
    team = await createFencingTeam({ members: ['alice', 'bob'], driver: 'git', transport: 'daemon' });
    [alice, bob] = team.members;
  });
  after(() => team?.dispose());

  it('(a) a gitRemote naming a bare repository committed in the work tree: acquire, petition and status refuse (exit 2), and its hooks never run', async () => {
    const marker = path.join(team.root, 'committed-hook-ran');
    // Bob carries a copy of the shared repository, lock refs included, in the branch, with a pre-receive hook of his own.
    const cache = path.join(bob.dir, 'tools', 'cache.git');
    await team.gitOk(bob.dir, 'clone', '--quiet', '--mirror', team.remote, cache);
    for (const sample of fs.readdirSync(path.join(cache, 'hooks'))) fs.rmSync(path.join(cache, 'hooks', sample));
    await publish(
      team,
      bob,
      'tools',
      settings => {
        settings.gitRemote = 'tools/cache.git';
      },
      {
        'tools/cache.git/hooks/pre-receive': { text: `#!/bin/sh\necho "$PWD" >> '${marker}'\ncat >/dev/null\nexit 0\n`, mode: 0o755 },
        'tools/cache.git/refs/.keep': { text: '' },
      },
    );
    await onBranch(team, alice, 'tools', async () => {
      assert.ok(
        fs.existsSync(path.join(alice.dir, 'tools', 'cache.git', 'hooks', 'pre-receive')),
        "the bare repository is in alice's work tree",
      );
      for (const args of [['acquire'], ['petition'], ['status']]) {
        configurationError(await team.lockstep(alice.dir, args), 'gitRemote', `alice: ${args[0]} on bob's branch`);
        assert.equal(fs.existsSync(marker), false, `${args[0]}: the committed repository's hook never ran`);
      }
    });
    // Control: on main, the committed remote is the team's, and the day goes on.
    await normalDay(team, alice, 'a-after.txt');
    assert.equal(fs.existsSync(marker), false);
  });

  it("(c) an ext:: gitRemote is refused (exit 2) even where the clone's own configuration allows ext::, and its command never runs", async () => {
    const marker = path.join(team.root, 'ext-ran');
    await publish(team, bob, 'ext', settings => {
      settings.gitRemote = `ext::touch ${marker}`;
    });
    await team.gitOk(alice.dir, 'config', 'protocol.ext.allow', 'always');
    try {
      await onBranch(team, alice, 'ext', async () => {
        for (const args of [['status'], ['acquire']]) {
          configurationError(await team.lockstep(alice.dir, args), 'gitRemote', `alice: ${args[0]} with an ext:: gitRemote`);
          assert.equal(fs.existsSync(marker), false, `${args[0]}: the ext:: command never ran`);
        }
      });
    } finally {
      await team.gitOk(alice.dir, 'config', '--unset', 'protocol.ext.allow');
    }
  });

  it('a committed remote that names no remote of the clone, or one whose URL lies in the work tree, is refused (exit 2)', async () => {
    await publish(team, bob, 'upstream', settings => {
      settings.remote = 'upstream';
    });
    await onBranch(team, alice, 'upstream', async () => {
      const refused = await team.lockstep(alice.dir, ['status']);
      configurationError(refused, 'remote', 'a remote the clone does not have');
      assert.match(refused.json.error.message, /names no remote of this clone \(it has origin\)/);
      // The clone's own remote pointing into its work tree (a path the user typed, or an insteadOf) is refused too.
      await team.gitOk(alice.dir, 'remote', 'add', 'upstream', 'tools/cache.git');
      try {
        configurationError(await team.lockstep(alice.dir, ['status']), 'remote', 'a remote inside the work tree');
      } finally {
        await team.gitOk(alice.dir, 'remote', 'remove', 'upstream');
      }
    });
  });

  it('(d) with a pinned PATH in which the hook finds no git, a push to an alias of main is refused (the fast path does not skip the guard)', async () => {
    await team.gitOk(team.remote, 'symbolic-ref', 'refs/heads/trunk', 'refs/heads/main');
    const hook = path.join(team.remote, 'hooks', 'pre-receive');
    const pinned = fs.readFileSync(hook, 'utf8');
    const empty = path.join(team.root, 'bin-without-git');
    fs.mkdirSync(empty, { recursive: true });
    fs.writeFileSync(hook, pinned.replace(/^PATH=.*$/m, `PATH='${empty}'`));
    try {
      await team.gitOk(bob.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
      const main = team.remoteSha();
      await team.commit(bob, 'b-alias.txt');
      const pushed = await team.git(bob.dir, ['push', '--no-verify', 'origin', 'HEAD:refs/heads/trunk']);
      assert.notEqual(pushed.code, 0, `bob's push to the alias must be refused\n${pushed.stderr}`);
      assert.match(pushed.stderr, /pre-receive hook declined/);
      assert.equal(team.remoteSha(), main, 'main did not move');
    } finally {
      fs.writeFileSync(hook, pinned);
      await team.gitOk(bob.dir, 'reset', '--quiet', '--hard', 'origin/main');
    }
    // Control: with git on the pinned PATH, the holder lands through the alias.
    await team.gitOk(alice.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
    ok(await team.lockstep(alice.dir, ['acquire']), 'alice acquires');
    const sha = await team.commit(alice, 'a-alias.txt');
    ok(await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/trunk']), 'alice lands through the alias');
    assert.equal(team.remoteSha(), sha);
    ok(await team.lockstep(alice.dir, ['release']), 'alice releases');
  });
});

describe('committed settings never run code (file driver, remote by path)', function () {
  this.timeout(300_000);
  let team: FencingTeam;
  let alice: TeamMember, bob: TeamMember;

  before(async () => {
    team = await createFencingTeam({ members: ['alice', 'bob'], transport: 'path' });
    [alice, bob] = team.members;
  });
  after(() => team?.dispose());

  it('(b) remote "--upload-pack" with a committed executable where git would take its value: acquire, release and status refuse, and it never runs', async () => {
    const marker = path.join(team.root, 'upload-pack-ran');
    // `git ls-remote <remote> refs/heads/main` with this remote reads "--upload-pack refs/heads/main": git would run ./refs/heads/main.
    await publish(
      team,
      bob,
      'upload',
      settings => {
        settings.remote = '--upload-pack';
      },
      {
        'refs/heads/main': { text: `#!/bin/sh\necho ran >> '${marker}'\nexit 1\n`, mode: 0o755 },
      },
    );
    await onBranch(team, alice, 'upload', async () => {
      for (const args of [['acquire'], ['status'], ['release'], ['petition']]) {
        const result = await team.lockstep(alice.dir, args);
        configurationError(result, 'remote', `alice: ${args[0]} with remote --upload-pack`);
        assert.equal(fs.existsSync(marker), false, `${args[0]}: the committed file never ran`);
      }
    });
    await normalDay(team, alice, 'a-after.txt');
    assert.equal(fs.existsSync(marker), false);
  });

  it("(e) NODE_OPTIONS=--require=evil.js in the pusher's environment does not run evil.js in the server guard", async () => {
    const marker = path.join(team.root, 'evil-ran');
    const evil = path.join(team.root, 'evil.js');
    fs.writeFileSync(evil, `require('node:fs').appendFileSync(${JSON.stringify(marker)}, process.argv.join(' ') + '\\n');\n`);
    await team.gitOk(bob.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
    const main = team.remoteSha();
    await team.commit(bob, 'b-evil.txt');
    // Past bob's own hook (his node is his business): only the server's guard stands in the way.
    const pushed = await team.git(bob.dir, ['push', '--no-verify', 'origin', 'HEAD:refs/heads/main'], {
      env: { NODE_OPTIONS: `--require=${evil}`, NODE_PATH: team.root },
    });
    assert.notEqual(pushed.code, 0, `bob has no grant: refused\n${pushed.stderr}`);
    assert.match(pushed.stderr, /remote: lockstep: refused refs\/heads\/main/, 'the server guard ran and refused');
    assert.equal(
      fs.existsSync(marker),
      false,
      `evil.js never ran in the server guard: ${fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''}`,
    );
    assert.equal(team.remoteSha(), main);
    await team.gitOk(bob.dir, 'reset', '--quiet', '--hard', 'origin/main');
    // Control: the holder still lands.
    await normalDay(team, alice, 'a-evil-control.txt');
  });
});
