import { createMemoryDriver } from '../../src/core/stores/memory';
import { wrapDriver } from '../helpers/drivers';
import { describeHandleContract } from '../contract/handleContract';

// One memory store for the suite, as a process would use it; closing a test's view leaves it open.
const shared = createMemoryDriver();
describeHandleContract('memory', async () => wrapDriver(shared, { close: async () => undefined }));
