import * as assert from 'node:assert/strict';
import { explainPushFailure } from '../../src/core/git/pushFailure';

/** A failed `git push --porcelain` read as git means it (outputs captured from git 2.x runs). */
describe('explainPushFailure: why the protected branch did not land, and the next step', () => {
  const where = { remote: 'origin', branch: 'main' };
  const to = 'To https://alice:s3cret@git.example.com/team/repo.git\n';

  it('behind (fetch first, non-fast-forward): pull --rebase, then push and release', () => {
    for (const why of ['fetch first', 'non-fast-forward']) {
      const f = explainPushFailure(
        {
          stdout: `${to}!\trefs/heads/main:refs/heads/main\t[rejected] (${why})\nDone\n`,
          stderr: "error: failed to push some refs to 'x'\nhint: Updates were rejected\n",
        },
        where,
      );
      assert.deepEqual(f, {
        kind: 'behind',
        message: 'origin/main has commits this clone does not have: pull them (git pull --rebase), then push and release again.',
      });
    }
  });

  it('the server guard refused: its own words, not the client hook\'s "verified" note printed before, nor its warning', () => {
    const f = explainPushFailure(
      {
        stdout: `${to}!\trefs/heads/main:refs/heads/main\t[remote rejected] (pre-receive hook declined)\nDone\n`,
        stderr:
          'lockstep: grant #22 verified for main.\nremote: lockstep: warning: pinned settings differ        \n' +
          "remote: lockstep: Push refused: the pusher does not hold the live grant (#23 is bob).        \nerror: failed to push some refs to 'x'\n",
      },
      where,
    );
    assert.equal(f.kind, 'refused-by-guard');
    assert.equal(
      f.message,
      'the server refused it (pre-receive hook declined): Push refused: the pusher does not hold the live grant (#23 is bob).',
    );
  });

  it("a forge's own rule (no Lockstep line): its remote lines, and who to ask", () => {
    const f = explainPushFailure(
      {
        stdout: `${to}!\trefs/heads/main:refs/heads/main\t[remote rejected] (protected branch hook declined)\nDone\n`,
        stderr:
          'remote: error: GH006: Protected branch update failed for refs/heads/main.\nremote: error: Required status check "lockstep-verify" is expected.\n',
      },
      where,
    );
    assert.equal(f.kind, 'refused-by-guard');
    assert.match(
      f.message,
      /^the server refused it \(protected branch hook declined\): error: GH006: Protected branch update failed for refs\/heads\/main\. error: Required status check "lockstep-verify" is expected\. Ask whoever administers the remote/,
    );
  });

  it("without porcelain lines (a push by VS Code's git): git's human lines on stderr say the same", () => {
    const behind = explainPushFailure(
      { stdout: '', stderr: `${to} ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs to 'x'\n` },
      where,
    );
    assert.equal(behind.kind, 'behind');
    const guard = explainPushFailure(
      {
        stdout: '',
        stderr: `lockstep: grant #22 verified for main.\nremote: lockstep: Push refused: the pusher does not hold the live grant.        \n${to} ! [remote rejected] main -> main (pre-receive hook declined)\nerror: failed to push some refs to 'x'\n`,
      },
      where,
    );
    assert.equal(
      guard.message,
      'the server refused it (pre-receive hook declined): Push refused: the pusher does not hold the live grant.',
    );
  });

  it("the client's pre-push guard refused: its words", () => {
    const f = explainPushFailure(
      {
        stdout: '',
        stderr:
          "lockstep: This clone does not hold the lock; pushes to protected branches need it.\nerror: failed to push some refs to 'x'\n",
      },
      where,
    );
    assert.deepEqual(f, {
      kind: 'refused-by-guard',
      message: 'the pre-push guard refused it: This clone does not hold the lock; pushes to protected branches need it.',
    });
  });

  it('credentials and an unreachable remote: what to set up, with no URL and no password', () => {
    const auth = explainPushFailure(
      {
        stdout: '',
        stderr:
          "remote: Invalid username or password.\nfatal: Authentication failed for 'https://alice:s3cret@git.example.com/team/repo.git/'\n",
      },
      where,
    );
    assert.equal(auth.kind, 'credentials');
    const down = explainPushFailure(
      { stdout: '', stderr: "fatal: unable to access 'https://alice:s3cret@git.example.com/': Could not resolve host: git.example.com\n" },
      where,
    );
    assert.equal(down.kind, 'unreachable');
    for (const f of [auth, down]) assert.doesNotMatch(f.message, /s3cret|https?:\/\//);
  });

  it('anything else: git\'s last line, redacted and escaped, never "git exited 128" or "To <remote>"', () => {
    const f = explainPushFailure(
      { stdout: to, stderr: 'fatal: the remote end hung up unexpectedly \u001b[31m for https://bob:pw@h/x\n' },
      where,
    );
    assert.equal(f.kind, 'other');
    assert.match(f.message, /^git said: fatal: the remote end hung up unexpectedly \\u001b\[31m for https:\/\/\*\*\*@h\/x$/);
  });
});
