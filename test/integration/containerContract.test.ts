import { describeContainerContract } from '../contract/containerContract';
import { makeTempDir, removeTempDir } from '../helpers/tempDir';

// The container contract on the drivers that need no server: file (the default), SQLite, git.
describeContainerContract('file', async () => ({ driver: 'file' }));

describeContainerContract('git', async () => ({ driver: 'git', initArgs: ['--driver', 'git'] }));

describe('on SQLite', () => {
  let dir: string;
  before(() => {
    dir = makeTempDir('lockstep-sqlite');
  });
  after(() => removeTempDir(dir));
  describeContainerContract('sql (SQLite)', async () => {
    const env = { LOCKSTEP_DRIVER: 'sql', LOCKSTEP_DATABASE_URL: `sqlite://${dir}/locks.db` };
    return { driver: 'sql', initArgs: ['--driver', 'sql'], env, beforeInit: [['migrate']] };
  });
});
