import * as assert from 'node:assert/strict';
import { transportOf } from '../../src/core/container/sharedRemote';
import { pathOfFileUrl } from '../../src/core/fileUrl';
import { parseDatabaseUrl } from '../../src/core/stores/sql/databaseUrl';
import { LockConfigurationError } from '../../src/core/errors';

/** File URLs and local paths, read with each platform's rules injected (fileUrl.ts, sharedRemote.ts, databaseUrl.ts). */
describe('file URLs become paths as the platform reads them', () => {
  describe('on Windows', () => {
    it('file:///C:/srv/repo.git is C:\\srv\\repo.git (not /C:/srv/repo.git), spaces decoded; a share is a UNC path', () => {
      assert.equal(pathOfFileUrl('file:///C:/srv/repo.git', 'win32'), 'C:\\srv\\repo.git');
      assert.equal(pathOfFileUrl('file:///C:/srv/my%20repo.git', 'win32'), 'C:\\srv\\my repo.git');
      assert.equal(pathOfFileUrl('file://server/share/repo.git', 'win32'), '\\\\server\\share\\repo.git');
      assert.equal(pathOfFileUrl('file:///srv/repo.git', 'win32'), undefined, 'no drive: names nothing on Windows');
    });

    it("the shared remote's transport: a file URL and a drive path are local files, never ssh", () => {
      assert.deepEqual(transportOf('file:///C:/srv/repo.git', 'win32'), { protocol: 'file', path: 'C:\\srv\\repo.git' });
      assert.deepEqual(transportOf('C:/srv/repo.git', 'win32'), { protocol: 'file', path: 'C:/srv/repo.git' });
      assert.deepEqual(transportOf('C:\\srv\\repo.git', 'win32'), { protocol: 'file', path: 'C:\\srv\\repo.git' });
      assert.deepEqual(transportOf('git@example.com:team/repo.git', 'win32'), { protocol: 'ssh' });
    });

    it('sqlite:///C:/data/locks.db is C:\\data\\locks.db; a path without a drive is refused', () => {
      assert.deepEqual(parseDatabaseUrl('sqlite:///C:/data/locks.db', 'C:\\store', 'win32'), {
        dialect: 'sqlite',
        file: 'C:\\data\\locks.db',
        isDefault: false,
      });
      assert.throws(() => parseDatabaseUrl('sqlite:///data/locks.db', 'C:\\store', 'win32'), LockConfigurationError);
    });
  });

  describe('on Linux and macOS (unchanged)', () => {
    for (const platform of ['linux', 'darwin'] as const) {
      it(`${platform}: file:///srv/repo.git is /srv/repo.git; C:/x is ssh as git reads it there; sqlite:///var/locks.db is /var/locks.db`, () => {
        assert.equal(pathOfFileUrl('file:///srv/my%20repo.git', platform), '/srv/my repo.git');
        assert.deepEqual(transportOf('file:///srv/repo.git', platform), { protocol: 'file', path: '/srv/repo.git' });
        assert.deepEqual(transportOf('C:/srv/repo.git', platform), { protocol: 'ssh' });
        assert.deepEqual(transportOf('../shared.git', platform), { protocol: 'file', path: '../shared.git' });
        assert.equal((parseDatabaseUrl('sqlite:///var/lib/locks.db', '/store', platform) as { file: string }).file, '/var/lib/locks.db');
      });
    }
  });
});
