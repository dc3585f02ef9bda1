import * as assert from 'node:assert/strict';
import { GRPCUnavailableError } from 'etcd3';
import { unsentRetryPolicy } from '../../src/core/stores/etcd/unsentRetry';

describe('etcd: a call is tried again only when it was never sent', () => {
  const run = async (errors: Error[], attempts = 4) => {
    let calls = 0;
    const policy = unsentRetryPolicy(attempts);
    const outcome = await policy
      .execute(() => {
        const error = errors[calls++];
        if (error) throw error;
        return 'done';
      })
      .then(
        value => value,
        (error: unknown) => error,
      );
    return { outcome, calls };
  };

  it('tries another member after "No connection established" and an open circuit, up to its attempts', async () => {
    const unsent = new GRPCUnavailableError('14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED');
    const open = new Error('Execution prevented because the circuit breaker is open');
    assert.deepEqual(await run([unsent, open]), { outcome: 'done', calls: 3 });
    const exhausted = await run([unsent, unsent, unsent, unsent], 4);
    assert.equal(exhausted.calls, 4);
    assert.equal(exhausted.outcome, unsent);
  });

  it('never re-sends a call that may have reached a member: a dropped connection, a deadline, a server error', async () => {
    for (const error of [
      new GRPCUnavailableError('14 UNAVAILABLE: Connection dropped'),
      new Error('4 DEADLINE_EXCEEDED: Deadline exceeded'),
      new Error('etcdserver: request timed out'),
    ]) {
      const result = await run([error]);
      assert.deepEqual(result, { outcome: error, calls: 1 }, error.message);
    }
  });
});
