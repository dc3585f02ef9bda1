import { createMemoryDriver } from '../../src/core/stores/memory';
import { wrapDriver } from '../helpers/drivers';
import { describeHandleContract, manualHandleTime } from '../contract/handleContract';

// One memory store for the suite, as a process would use it; closing a test's view leaves it open.
const shared = createMemoryDriver();
// The memory driver only knows the time the managers give it: expiry costs no real time.
describeHandleContract('memory', async () => wrapDriver(shared, { close: async () => undefined }), manualHandleTime());
