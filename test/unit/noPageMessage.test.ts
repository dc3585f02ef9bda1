import * as assert from 'node:assert/strict';
import { LockNoPageError } from '../../src/core/errors';

const CONTAINER = '0b7e2c1a-5d4f-4c3b-9a2e-1f0d3c4b5a69';
const page = (driver: string) => ({ driver, location: 'somewhere', prefix: 'lockstep', container: CONTAINER });

describe('the message of a store that holds no lock page', () => {
  it("names the settings that choose the driver's page, and not another driver's", () => {
    const own: Record<string, RegExp> = {
      file: /LOCKSTEP_PATH/,
      redis: /LOCKSTEP_REDIS_URL/,
      sql: /LOCKSTEP_DATABASE_URL \(without one, LOCKSTEP_PATH: the SQLite file is there\)/,
      etcd: /LOCKSTEP_ETCD_ENDPOINTS/,
      git: /LOCKSTEP_GIT_REMOTE .*lock ref/,
    };
    for (const [driver, names] of Object.entries(own)) {
      const { message } = new LockNoPageError(page(driver), undefined);
      assert.match(message, names, driver);
      assert.match(message, /LOCKSTEP_PREFIX \/ LOCKSTEP_DRIVER/, driver);
      assert.match(message, /lockstep adopt/, driver);
      // SQL without a database URL is SQLite, whose file is in LOCKSTEP_PATH: the one variable two drivers share.
      for (const [other, theirs] of Object.entries(own)) {
        if (other !== driver && !(driver === 'sql' && other === 'file')) assert.doesNotMatch(message, theirs, `${driver} names ${other}'s`);
      }
    }
  });

  it('on the memory driver, says that no command of its own finds such a page, and to commit another driver', () => {
    const { message } = new LockNoPageError(page('memory'), undefined);
    assert.match(message, /only inside the process that made it/);
    assert.match(message, /Commit another driver in \.lockstep\.json/);
    assert.doesNotMatch(message, /lockstep adopt/, 'an adopt there would be lost with its process too');
  });
});
