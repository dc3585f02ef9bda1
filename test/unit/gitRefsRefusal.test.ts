import * as assert from 'node:assert/strict';
import { LockBackendError } from '../../src/core/errors';
import { refusedError } from '../../src/core/stores/git/gitRefs';

describe('git driver: a lock-ref write the remote refused', () => {
  it('says what git said, with the likely causes, and is not retried', () => {
    const error = refusedError('[remote rejected] (pre-receive hook declined)');
    assert.ok(error instanceof LockBackendError);
    assert.equal(error.retryable, false);
    assert.match(
      error.message,
      /^The git remote refused to update a lock ref \(git said: \[remote rejected\] \(pre-receive hook declined\)\)\. Check that your account may push refs under refs\/lockstep\//,
    );
  });

  it('never names the lock ref itself (a raw backend key)', () => {
    const digest = 'ab12'.repeat(16);
    const error = refusedError(`[remote rejected] (cannot lock ref 'refs/lockstep/c/${digest}': is at 1 but expected 2)`);
    assert.doesNotMatch(error.message, new RegExp(digest));
    assert.match(error.message, /cannot lock ref 'refs\/lockstep\/…': is at 1 but expected 2/);
  });

  it('a non-fast-forward refusal says that lock refs need them', () => {
    assert.match(refusedError('[remote rejected] (non-fast-forward)').message, /refuses non-fast-forward updates of lock refs/);
  });
});
