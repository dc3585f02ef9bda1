/**
 * The git driver's page as it lies in a repository: its refs, record and audit files, commit format and allowed-signers
 * limit. The face of the git driver for readers that have no driver and no clone: the server guard, which checks
 * pushed record commits in the bare repository itself (through src/core/application.ts).
 */
export { AUDIT_LOG_KEEP, AUTO_COMPACT_AFTER, auditLogText, keptEntries } from './git/auditHistory';
export { AUDIT_FILE, GitRefs, MAX_RECORD_BYTES, RECORD_FILE, SNAPSHOT_TRAILER } from './git/gitRefs';
export { checkRecordCommit, compactionSubject, lastAuditLine, stampOf, transitionSubject } from './git/recordCommit';
export { MAX_ALLOWED_SIGNERS_BYTES, withSignersFile } from './git/signersFile';
