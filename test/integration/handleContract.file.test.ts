import { createFileDriver } from '../../src/core/stores/file';
import { describeHandleContract } from '../contract/handleContract';
import { useTempDir } from '../helpers/tempDir';

// A fresh driver per test on one store folder: state persists across driver instances, as across processes.
const store = useTempDir('lockstep-handle-contract-file', 'suite');
describeHandleContract('file', async () => createFileDriver({ path: store.path, prefix: 'contract' }));
