import * as assert from 'node:assert/strict';
import { parseContainerFile } from '../../src/core/container/containerFile';
import { pinnedDrift } from '../../src/core/guard/pinnedDrift';

/** Which settings of the pinned branch's `.lockstep.json` differ from the server guard's pinned ones (issue #24, item 11). */
describe('pinned settings drift (pure)', () => {
  const file = (extra: object = {}) =>
    parseContainerFile(
      JSON.stringify({
        container: '0b7e2c1a-5d4f-4c3b-9a2e-1f0d3c4b5a69',
        protectedBranches: ['main', 'release'],
        operators: ['a@x', 'b@x'],
        ...extra,
      }),
    );

  it('none when only the order of a list or an unread setting (remote, gitTimeoutSeconds) differs', () => {
    assert.deepEqual(pinnedDrift(file(), file({ protectedBranches: ['release', 'main'], operators: ['b@x', 'a@x'] })), []);
    assert.deepEqual(pinnedDrift(file(), file({ remote: 'upstream', gitTimeoutSeconds: 9 })), []);
  });

  it('names every setting the guard decides with that changed: protected branches, operators, windows, driver and page', () => {
    assert.deepEqual(pinnedDrift(file(), file({ protectedBranches: ['main'] })), ['protectedBranches']);
    assert.deepEqual(pinnedDrift(file(), file({ operators: ['a@x', 'c@x'], windowSeconds: 60 })), ['operators', 'windowSeconds']);
    assert.deepEqual(pinnedDrift(file(), file({ driver: 'git', prefix: 'other', serverGuard: true })), ['driver', 'prefix', 'serverGuard']);
    assert.deepEqual(pinnedDrift(file(), file({ container: '1b7e2c1a-5d4f-4c3b-9a2e-1f0d3c4b5a69', path: '/srv/locks' })), [
      'container',
      'path',
    ]);
    assert.deepEqual(pinnedDrift(file(), file({ leaseTtlSeconds: 3600, heartbeatSeconds: 60 })), ['leaseTtlSeconds', 'heartbeatSeconds']);
  });

  it('a list that gained an entry differs, though it still holds every pinned one', () => {
    assert.deepEqual(pinnedDrift(file(), file({ operators: ['a@x', 'b@x', 'c@x'] })), ['operators']);
    assert.deepEqual(pinnedDrift(file(), file({ protectedBranches: ['main', 'release', 'main-2'] })), ['protectedBranches']);
  });
});
