import { createMemoryDriver } from '../../src/core/stores/memory';
import { describeDriverContract, manualClock } from '../contract/driverContract';

// One memory store shared by all tests of the suite, as a process would use it.
const shared = createMemoryDriver();
describeDriverContract(
  'memory',
  async () => ({
    name: shared.name,
    distributed: shared.distributed,
    claim: shared.claim.bind(shared),
    extend: shared.extend.bind(shared),
    release: shared.release.bind(shared),
    read: shared.read.bind(shared),
    compareAndSwap: shared.compareAndSwap.bind(shared),
    watch: shared.watch?.bind(shared),
    // The suite closes what `open` returns after every test; the shared store stays open.
    close: async () => undefined,
  }),
  manualClock(),
); // the memory driver only knows the time it is given: expiry costs no real time
