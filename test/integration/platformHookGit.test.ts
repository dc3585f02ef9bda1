import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createFencingTeam, type FencingTeam, type TeamMember } from '../helpers/fencingFixture';

/**
 * Issue #29: the server hook's sh must fail closed when it cannot run git. The hook pins the PATH
 * seen at install time; on Windows that PATH is in Windows form (`C:\Program Files\Git\cmd;…`),
 * which Git for Windows' sh cannot search, and on any system git may move after an upgrade. Either
 * way `git symbolic-ref -q` exits 127, not git's own "not a symbolic ref" (1), and the push to an
 * alias of main must still meet the guard. Real bare repository, real installed hook, over a local
 * path and over `git daemon`.
 */
const PINNED_PATHS: readonly { readonly platform: string; readonly path: string }[] = [
  { platform: 'on Windows', path: 'C:\\Program Files\\Git\\cmd;C:\\Windows\\system32;C:\\Windows' },
  { platform: 'on any system, git moved after an upgrade', path: '/nonexistent/git-was-here/bin' },
];

for (const transport of ['path', 'daemon'] as const) {
  describe(`server hook whose pinned PATH finds no git (remote by ${transport})`, function () {
    this.timeout(240_000);
    let team: FencingTeam;
    let bob: TeamMember;
    let hook: string;
    let installed: string;

    before(async () => {
      team = await createFencingTeam({ members: ['alice', 'bob'], transport });
      bob = team.member('bob');
      hook = path.join(team.remote, 'hooks', 'pre-receive');
      installed = fs.readFileSync(hook, 'utf8');
      assert.match(installed, /^PATH='[^'\n]*'$/m, 'the installed hook pins PATH on one line');
      await team.gitOk(team.remote, 'symbolic-ref', 'refs/heads/trunk', 'refs/heads/main');
    });
    after(() => team?.dispose());

    it('control: with the PATH it was installed with, a push to an ordinary branch lands (the fast path skips the guard)', async () => {
      await team.commit(bob, 'control.txt');
      const pushed = await team.git(bob.dir, ['push', '--no-verify', 'origin', 'HEAD:refs/heads/control']);
      assert.equal(pushed.code, 0, pushed.stderr);
    });

    for (const pinned of PINNED_PATHS) {
      describe(`${pinned.platform}: PATH=${pinned.path}`, () => {
        before(() => {
          // The hook as `hooks install --server` would write it where that PATH was current: every mention of the pinned PATH swapped.
          const original = /^PATH=('[^'\n]*')$/m.exec(installed)?.[1] ?? '';
          const quoted = `'${pinned.path.replace(/'/g, `'\\''`)}'`;
          fs.writeFileSync(hook, installed.split(original).join(quoted), { mode: 0o755 });
        });
        after(() => fs.writeFileSync(hook, installed, { mode: 0o755 }));

        it('a push without proof to an alias of main is refused, and main does not move', async () => {
          const main = team.remoteSha('main');
          await team.gitOk(bob.dir, 'fetch', '--quiet', 'origin');
          await team.gitOk(bob.dir, 'reset', '--quiet', '--hard', 'origin/main');
          await team.commit(bob, `alias-${Date.now()}.txt`);
          const pushed = await team.git(bob.dir, ['push', '--no-verify', 'origin', 'HEAD:refs/heads/trunk']);
          assert.notEqual(pushed.code, 0, `the push must be refused\n${pushed.stderr}`);
          assert.match(pushed.stderr, /pre-receive hook declined/, pushed.stderr);
          assert.match(pushed.stderr, /^remote: lockstep: /m, `the guard says why\n${pushed.stderr}`);
          assert.equal(team.remoteSha('main'), main, 'main did not move');
        });

        it('a push to an ordinary branch is refused too, saying that git cannot be found and what to do', async () => {
          await team.gitOk(bob.dir, 'reset', '--quiet', '--hard', 'origin/main');
          await team.commit(bob, `feature-${Date.now()}.txt`);
          const pushed = await team.git(bob.dir, ['push', '--no-verify', 'origin', 'HEAD:refs/heads/feature']);
          assert.notEqual(pushed.code, 0, `the push must be refused\n${pushed.stderr}`);
          assert.ok(pushed.stderr.includes(`installed with (${pinned.path})`), pushed.stderr);
          assert.match(pushed.stderr, /Run lockstep hooks install --server again/);
          assert.equal(team.remoteSha('feature'), '', 'feature was not created');
        });
      });
    }
  });
}
