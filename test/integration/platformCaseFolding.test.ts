import * as assert from 'node:assert/strict';
import { createFencingTeam, type FencingTeam, type TeamMember } from '../helpers/fencingFixture';

/**
 * Issue #29: on macOS and Windows a bare repository's refs live on a case-insensitive filesystem and
 * git sets core.ignorecase=true there; a push to refs/heads/Main writes main's file. This machine's
 * filesystem is case-sensitive, so the test gives the real bare repository that setting, as git on
 * those systems does, and asserts the real installed hook and guard treat Main as main.
 */
describe('on macOS and Windows: a server whose refs ignore case (core.ignorecase=true)', function () {
  this.timeout(240_000);
  let team: FencingTeam;
  let bob: TeamMember;

  before(async () => {
    team = await createFencingTeam({ members: ['alice', 'bob'] });
    bob = team.member('bob');
  });
  after(() => team?.dispose());

  const pushAs = async (ref: string) => {
    await team.gitOk(bob.dir, 'fetch', '--quiet', 'origin');
    await team.gitOk(bob.dir, 'reset', '--quiet', '--hard', 'origin/main');
    await team.commit(bob, `${ref.replace(/\W/g, '-')}-${Date.now()}.txt`);
    return team.git(bob.dir, ['push', '--no-verify', 'origin', `HEAD:${ref}`]);
  };

  for (const ref of ['refs/heads/Main', 'refs/heads/MAIN']) {
    it(`a push without proof to ${ref} is refused by the server guard`, async () => {
      await team.gitOk(team.remote, 'config', 'core.ignorecase', 'true');
      const pushed = await pushAs(ref);
      assert.notEqual(pushed.code, 0, `the push must be refused\n${pushed.stderr}`);
      assert.match(pushed.stderr, new RegExp(`^remote: lockstep: refused ${ref}: `, 'm'), pushed.stderr);
      assert.match(pushed.stderr, /pre-receive hook declined/);
      assert.equal(team.remoteSha(ref.slice('refs/heads/'.length)), '', `${ref} was not written`);
    });
  }

  it('control, on Linux (core.ignorecase=false): Main is another branch, and the push lands', async () => {
    await team.gitOk(team.remote, 'config', 'core.ignorecase', 'false');
    const pushed = await pushAs('refs/heads/Main');
    assert.equal(pushed.code, 0, pushed.stderr);
    assert.notEqual(team.remoteSha('Main'), '');
  });
});
