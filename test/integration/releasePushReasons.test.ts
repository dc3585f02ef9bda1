import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createGitFixture, expectError, expectOk, type GitFixture, type TeamMember } from '../helpers/gitFixture';

/**
 * `release --push` says why the push did not land, in git's and the server's words, with the next step
 * (issue 26): a rule of the server's own (as a forge's branch protection answers), quoted after the client
 * guard's "verified" note that git printed first. Real `lockstep` and `git` processes, a real bare remote.
 */
describe('release --push: the reason a push did not land (real processes, real git)', function () {
  this.timeout(180_000);
  let team: GitFixture;
  let lead: TeamMember;

  before(async () => {
    team = await createGitFixture({ members: ['lead'], operators: ['lead'] });
    [lead] = team.members;
  });
  after(() => team?.dispose());

  it('a server rule refuses: its own words, the lock stays held; once the rule is gone, release --push lands', async () => {
    expectOk(await team.cli(lead, ['hooks', 'install']), 'client guard');
    expectOk(await team.cli(lead, ['acquire']), 'acquire');
    fs.appendFileSync(path.join(lead.dir, 'README.md'), "the lead's work\n");
    team.git(lead, 'commit', '--quiet', '-am', 'lead work');
    // The server's own branch protection, as a forge answers (no Lockstep on the server).
    const hook = path.join(team.remote, 'hooks', 'pre-receive');
    fs.writeFileSync(
      hook,
      '#!/bin/sh\necho "error: GH006: Protected branch update failed for refs/heads/main." >&2\necho "error: Required status check \\"lockstep-verify\\" is expected." >&2\nexit 1\n',
      { mode: 0o755 },
    );
    try {
      const refused = expectError(await team.cli(lead, ['release', '--push']), 1, 'refused', 'not-landed');
      assert.equal(
        refused.message,
        'The push was refused, so the lock stays yours: the server refused it (pre-receive hook declined): ' +
          'error: GH006: Protected branch update failed for refs/heads/main. error: Required status check "lockstep-verify" is expected. ' +
          'Ask whoever administers the remote what its rule requires.',
      );
      assert.doesNotMatch(refused.message, /verified|exited|To /);
      assert.equal(expectOk(await team.cli(lead, ['status']), 'status').state, 'held-by-me');
    } finally {
      fs.rmSync(hook);
    }
    const released = expectOk(await team.cli(lead, ['release', '--push']), 'release --push');
    assert.equal(released.pushed, true);
  });
});
