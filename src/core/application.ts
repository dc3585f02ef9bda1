/**
 * The one entry of `src/core` for the command line (`src/cli`) and the extension (`src/extension`): everything they may
 * use of core, and nothing else (test/unit/layers.test.ts keeps it so). A driver's internals stay inside `stores/`.
 */
export { writeFileAtomically } from './atomicReplace';
export { assertWait, parseSeconds, parseTtlSeconds, TTL_MAX_SECONDS, TTL_MIN_SECONDS, WAIT_MAX_SECONDS } from './bounds';
export { checkRecordUpdate } from './chain/recordUpdate';
export { digestOf } from './chain/signedChain';
export { MAX_OPENPGP_FILE_BYTES, type OpenpgpListingText, readOpenpgpListing, stepSignature } from './chain/openpgpSigners';
export { checkSignedRestart, checkSignedSnapshot, checkSigner, type StepSignature } from './chain/signedStep';
export { type Clock, SECOND, systemClock, type Timer } from './clock';
export type { DriverSetting, LockManagerOptions } from './config';
export { fetchBranch, isNoContainerHere, openClone } from './container/clone';
export { configuredUrls, readCloneSettings, type SettingEntry } from './git/cloneSettings';
export { Container } from './container/container';
export {
  CONTAINER_DEFAULTS,
  CONTAINER_FILE,
  type ContainerFile,
  containerSettings,
  driverOptions,
  readContainerFile,
} from './container/containerFile';
export { PageWithoutClone, type ServerProof } from './container/guardPageAccess';
export { clearHeartbeatStop, heartbeatStopRequested, requestHeartbeatStop, watchLockstepFolder } from './container/heartbeatStop';
export { checkInitAllowed, initContainer } from './container/init';
export { containerConfig } from './container/pageSettings';
export { prepareLanding, pushProtectedBranch, pushRefused, pushWithGit } from './container/push';
export type { RecordAtRevision } from './container/swapService';
export { ChangeWaiter, WAITING } from './container/turnWait';
export { bareRepositoryFindings } from './diagnosis/bareDoctor';
export { diagnose, type Finding } from './diagnosis/diagnosis';
export { gatherDoctorFacts } from './diagnosis/doctorFacts';
export { type PageRead, readPageFromRemote, readPageInBareRepository } from './diagnosis/pageFromAnywhere';
export {
  describePage,
  exitCodeFor,
  LockBackendError,
  LockBusyError,
  LockConfigurationError,
  LockError,
  LockErrorCode,
  LockFencedError,
  LockLeaseLostError,
  LockNoPageError,
  LockRefusedError,
  LockTamperedPageError,
  type PageLocation,
} from './errors';
export { fenceClientPush, fenceServerPush, pushOptionsFromEnv, refusalGist } from './fencing';
export { writeForgeCheck } from './forge/forgeInit';
export { type Forge, FORGE_FILES } from './forge/forgeTemplates';
export { formatClock, formatDuration, formatTime, localiseTimes } from './format';
export { GitError } from './git/gitError';
export { chooseGitProgram, type GitProgram, gitProgram, useGitProgram } from './git/gitProgram';
export { explainPushFailure } from './git/pushFailure';
export { type GitCommand, gitIn, type GitOutput, GitRunner, type GitRunOptions } from './git/runner';
export { checkLeaseUpdate, type LeaseBefore } from './guard/leaseUpdate';
export { pinnedDriftWarning } from './guard/pinnedDrift';
export { carriesProof, checkProofLeak, proofsSent } from './guard/proofLeak';
export { sameRepository } from './guard/repositoryUrl';
export { parsePushArguments, pushArgumentsOf } from './guard/pushCommandLine';
export { checkCompaction, type PushedCommit, recordCommitShape } from './guard/recordHistory';
export { type RefUpdate, ruleFor, ZERO_SHA } from './guard/refRules';
export {
  describeServerSettings,
  guardWitnessFile,
  parseServerSettings,
  PUSHER_VARIABLES,
  pusherIdentity,
  type PusherVariable,
  SERVER_SETTINGS_FILE,
  serverContainerSettings,
  serverDriverOptions,
  type ServerSettings,
  type ServerStore,
} from './guard/serverSettings';
export { backoffDelay, HeartbeatLoop, type HeartbeatLoss } from './heartbeatLoop';
export { type HoldFacts, holdWarningMessage, planHoldWarnings } from './holdWarnings';
export { shellQuote } from './hooks/hookScripts';
export {
  hasClientHook,
  installClientHooks,
  installServerHooks,
  isBareRepository,
  readServerSettings,
  repairClientHook,
} from './hooks/install';
export { createLockManager } from './leases';
export {
  afterClear,
  type AuditLine,
  type Block,
  type Caution,
  type IdRange,
  knownIdentities,
  type LockRecord,
  MAX_IDS_PER_LEASE,
  MAX_LEASE_TTL_MS,
  mergeSpans,
  MIN_LEASE_TTL_MS,
  spansText,
} from './lockRecord';
export { describe, hasTurn, lapseLine, LockState, type LockStatus } from './lockStatus';
export { petitionMessage, petitionsToTell } from './petitionNotices';
export { lockedByOthers, readOnlyReason } from './readOnly';
export { parseRecord } from './recordCodec';
export { escapeControls } from './safeText';
export {
  AUDIT_FILE,
  AUDIT_LOG_KEEP,
  auditLogText,
  checkRecordCommit,
  compactionSubject,
  GitRefs,
  keptEntries,
  lastAuditLine,
  MAX_ALLOWED_SIGNERS_BYTES,
  MAX_RECORD_BYTES,
  RECORD_FILE,
  SNAPSHOT_TRAILER,
  stampOf,
  transitionSubject,
  withSignersFile,
} from './stores/gitPageLayout';
export type { DeploymentInfo, Disposable, HistoryEntry, LiveChannel, LiveWatch, Watch, WatchInterest, WatchOptions } from './stores/store';
export { auditFromHistory, buildTimeline, describeBar, describeWait, type GrantBar, longerAudit, type QueueWait } from './timeline';
export { digestsEqual, hashProof } from './tokens';
export { containerFileAt, readPageHistory } from './verify/pageHistory';
export { type Verdict, verdictMarkdown, verdictText } from './verify/verdict';
export { verifyMerge } from './verify/verifyMerge';
export { verifyPush } from './verify/verifyPush';
export { refuseTrackedWitness } from './verify/witnessFile';
