/**
 * The record module's entry: the container's lock record (docs/protocol.md#the-record) and its
 * transitions, as every importer uses them. Every transition is a pure function
 * `(record, request, now) → outcome`: no I/O, no clock, no randomness. The container service
 * applies them through a driver's compare-and-swap. The code lives in `record/`, one concern a file
 * (docs/architecture.md): refusals are returned as a reason plus facts, and `record/refusalText.ts`
 * is the one place they become words.
 */

export { acquire, nextGrant } from './record/acquire';
export { boundAudit, keptForever, summarise } from './record/audit';
export { assign, markDone } from './record/blocks';
export { afterClear, clear, clearedPrefix } from './record/clear';
export { heartbeat } from './record/heartbeat';
export { knownIdentities } from './record/identities';
export { leaseIds, nextId } from './record/identifiers';
export { mergeSpans, spansText, unusedIdentifiers } from './record/identifierPool';
export { announceLanding, FULL_COMMIT, type Landing, landingDetail, parseLandingDetail } from './record/landing';
export type { Outcome } from './record/outcome';
export { adoptPage, createPage } from './record/page';
export { petition, withdraw } from './record/queue';
export {
  type AuditAction,
  type AuditLine,
  type Block,
  type Caution,
  type ContainerSettings,
  emptyRecord,
  type Holder,
  type HolderProof,
  type IdRange,
  type IdSpan,
  LEGACY_MIN_LEASE_TTL_MS,
  type LockRecord,
  MAX_AUDIT_BYTES,
  MAX_AUDIT_LINES,
  MAX_BLOCK_LENGTH,
  MAX_HOLD_MS,
  MAX_IDENTITY_LENGTH,
  MAX_IDS_PER_LEASE,
  MAX_LEASE_TTL_MS,
  MAX_NOTE_LENGTH,
  MAX_REFUSAL_BYTES,
  MAX_REFUSAL_LINES,
  MIN_LEASE_TTL_MS,
  type Petition,
} from './record/record';
export type { Refusal } from './record/refusal';
export { lapseMessage, lapseText, nextStep, nextStepText, refusalText } from './record/refusalText';
export { auditRefusedPush } from './record/refusedPush';
export { LANDED_COMMIT, liftsCaution, release, releaseRecorded } from './record/release';
export { holds, isLive, type Lapse, lapseOf, mayAcquire, type NextStep, nextMove, type Turn, turnAt } from './record/turns';
