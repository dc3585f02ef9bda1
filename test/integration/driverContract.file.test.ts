import { createFileDriver } from '../../src/core/stores/file';
import { describeDriverContract } from '../contract/driverContract';
import { useTempDir } from '../helpers/tempDir';

// A fresh driver per test on one store folder: state persists across driver instances, as across processes.
const store = useTempDir('lockstep-contract-file', 'suite');
describeDriverContract('file', async () => createFileDriver({ path: store.path, prefix: 'contract' }));
