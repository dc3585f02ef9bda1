/** Lockstep's library entry point: `import { createLockManager } from 'lockstep'`. */
export { createLockManager, LockManager, LockHandle, type AcquireOptions, type CreateLockManagerOptions } from './leases';
export { resolveConfig, type LockManagerOptions, type ResolvedConfig, type DriverName, type DriverSetting } from './config';
export {
  LockError,
  LockErrorCode,
  LockConfigurationError,
  LockBackendError,
  LockWriteDeclinedError,
  LockReplicationError,
  LockTlsError,
  LockStorageError,
  LockOwnershipError,
  LockBusyError,
  LockFencedError,
  LockRefusedError,
  LockLeaseLostError,
  exitCodeFor,
  type RefusalReason,
} from './errors';
export { systemClock, ManualClock, type Clock } from './clock';
export { TTL_MIN_SECONDS, TTL_MAX_SECONDS, WAIT_MIN_SECONDS, WAIT_MAX_SECONDS } from './bounds';
export type { Driver, LeaseStore, RecordStore } from './stores/store';
