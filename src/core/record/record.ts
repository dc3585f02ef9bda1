import { HOUR, SECOND } from '../clock';

/**
 * The container's lock record (docs/protocol.md#the-record): its shape, the page before anything
 * happened on it, and the limits every transition keeps. Types and numbers only.
 */

/** docs/protocol.md#caps: a lease is never extended past 24 hours from its grant. */
export const MAX_HOLD_MS = 24 * HOUR;
/**
 * docs/protocol.md#caps: the lease length of a grant (`acquire --ttl`, else `leaseTtlSeconds`) is
 * the container's: 60 s (the floor of `leaseTtlSeconds`) to 24 h. A grant keeps its own
 * ({@link Holder.ttlMs}): each heartbeat extends it by that much. Seed 003's plain leases
 * (leases.ts) are another thing and keep their own bounds (bounds.ts).
 */
export const MIN_LEASE_TTL_MS = 60 * SECOND;
/**
 * The floor before issue #24 (seed 003's 1 s): a holder stored by that version with a shorter lease
 * than {@link MIN_LEASE_TTL_MS} still reads (recordCodec.ts) and runs out on its own; no new grant gets one.
 */
export const LEGACY_MIN_LEASE_TTL_MS = SECOND;
export const MAX_LEASE_TTL_MS = MAX_HOLD_MS;
/**
 * The record keeps this many transition lines besides the operator's clear lines (which it always
 * keeps, see `keptForever` in audit.ts); older ones stay in the git driver's history only. Refused
 * attempts have their own section ({@link MAX_REFUSAL_LINES}) and never count here.
 */
export const MAX_AUDIT_LINES = 500;
/**
 * The transitions' share of a record, in bytes of JSON: well under every store's 1 MiB limit.
 * Past it the oldest lines other than clear lines go. Clear lines never go: were they alone past
 * it (hundreds of clears; a clear line is at most about 1 KiB), the record would grow past it
 * rather than lose one (docs/protocol.md#the-audit-trail).
 */
export const MAX_AUDIT_BYTES = 256 * 1024;
/**
 * Refused attempts (pushes a guard refused, refused clears) are folded per person and action and
 * kept in a section of their own: at most this many lines and {@link MAX_REFUSAL_BYTES} bytes, the
 * oldest going first. Anyone can make them, so however many there are, they never push out a
 * transition or a clear (docs/protocol.md#the-audit-trail).
 */
export const MAX_REFUSAL_LINES = 50;
export const MAX_REFUSAL_BYTES = 32 * 1024;
export const MAX_NOTE_LENGTH = 200;
export const MAX_BLOCK_LENGTH = 500;
export const MAX_IDENTITY_LENGTH = 200;
export const MAX_IDS_PER_LEASE = 1_000_000;

export interface ContainerSettings {
  /** Lease length granted by acquire and each heartbeat. */
  readonly leaseTtlMs: number;
  /** How long the queue head alone may acquire after a release (then the next waiter too, …). */
  readonly windowMs: number;
  /** Identities allowed to clear a HOLDER SILENT lock. */
  readonly operators: readonly string[];
}

export interface Holder {
  readonly identity: string;
  readonly grant: number;
  /** SHA-256 of the owner token (the token stays in the holder's clone). */
  readonly tokenHash: string;
  /** SHA-256 of the push proof for this grant (see tokens.ts). */
  readonly proofHash: string;
  readonly grantedAt: number;
  readonly expiresAt: number;
  /**
   * The grant's lease length ({@link MIN_LEASE_TTL_MS} to {@link MAX_LEASE_TTL_MS}), chosen at acquire:
   * every heartbeat extends the lease by this much (never past {@link MAX_HOLD_MS} from the grant).
   * Records written before grants kept it read as the container's `leaseTtlMs` (recordCodec.ts).
   */
  readonly ttlMs: number;
}

export interface Petition {
  readonly identity: string;
  readonly at: number;
  readonly note?: string;
}

export interface IdRange {
  readonly to: string;
  readonly start: number;
  readonly end: number;
  /** The next identifier the lessee will mint; `end + 1` when used up. */
  readonly next: number;
  readonly grant: number;
  readonly at: number;
}

export interface Block {
  /** The block's number on this page (1, 2, …; never reused). `lockstep done --block N`. */
  readonly id: number;
  readonly to: string;
  readonly text: string;
  readonly grant: number;
  readonly at: number;
}

export type AuditAction =
  | 'init'
  | 'adopt'
  | 'acquire'
  | 'heartbeat'
  | 'release'
  | 'petition'
  | 'withdraw'
  | 'lease-ids'
  | 'next-id'
  | 'assign'
  | 'done'
  | 'clear'
  /** A push to a protected branch that a guard refused (always `outcome: 'refused'`). */
  | 'push'
  /** The live holder announces a landing before pushing it: `<branch> <from>..<to>` (`announceLanding`, landing.ts). */
  | 'land';

export interface AuditLine {
  readonly at: number;
  readonly who: string;
  readonly action: AuditAction;
  /**
   * The grant the line is about (the holder's grant for clears). A `clear` line with outcome
   * `done` is an operator's clear and is kept forever; a refused `clear` line is a refused attempt,
   * folded and bounded like every other line.
   */
  readonly grant: number;
  readonly outcome: 'done' | 'refused';
  readonly detail?: string;
  /**
   * How many transitions or attempts the line stands for: a grant's heartbeats in a row fold into
   * one line, and so do one person's refused attempts of one action (with the latest one's time,
   * grant and detail).
   */
  readonly count?: number;
  /** For folded refused attempts: when the first of them was. */
  readonly since?: number;
  /** The person a lease or block was given to (so the page knows every identity it has seen). */
  readonly to?: string;
}

/** A run of identifiers that were leased, never minted, and came back on release. */
export interface IdSpan {
  readonly start: number;
  readonly end: number;
}

/**
 * Seed 001: after HOLDER SILENT (a clear, or a takeover of an expired holder) readers treat the
 * copy with caution "until a push and release restore it": the mark ends at the first release with
 * a landing by a holder of a grant later than `silentGrant` (`liftsCaution`, release.ts); a release with
 * nothing landed keeps it.
 */
export interface Caution {
  /** The grant whose holder went silent. */
  readonly silentGrant: number;
  /** When the lock was cleared or taken over. */
  readonly since: number;
  /** Who cleared it or took it over. */
  readonly by: string;
}

export interface LockRecord {
  readonly v: 1;
  readonly container: string;
  /** The last grant issued; 0 before the first acquisition. Never decreases, never repeats. */
  readonly grant: number;
  readonly holder: Holder | null;
  /** When the last release or clear opened the handover window; null while held or never held. */
  readonly releasedAt: number | null;
  /** Petitions in the order the store recorded them. */
  readonly queue: readonly Petition[];
  readonly ranges: readonly IdRange[];
  /** The next identifier never handed out. Only grows: no identifier is ever issued twice. */
  readonly nextId: number;
  /**
   * Identifiers below `nextId` that were leased, never minted, and came back when their grant ended
   * (release, clear, or takeover of a silent holder); sorted, disjoint, never adjacent, and disjoint
   * from every range.
   */
  readonly pool: readonly IdSpan[];
  /** Blocks of work, kept across grants until marked done. */
  readonly blocks: readonly Block[];
  /** The last block number given; block numbers are never reused. */
  readonly lastBlock: number;
  readonly caution: Caution | null;
  readonly audit: readonly AuditLine[];
}

/** The page before anything happened on it. Stored only through `createPage` or `adoptPage` (page.ts). */
export function emptyRecord(container: string): LockRecord {
  return {
    v: 1,
    container,
    grant: 0,
    holder: null,
    releasedAt: null,
    queue: [],
    ranges: [],
    nextId: 1,
    pool: [],
    blocks: [],
    lastBlock: 0,
    caution: null,
    audit: [],
  };
}

/** Who presents a grant: the session a holder keeps in its clone (its token stays there; the page has its hash). */
export interface HolderProof {
  readonly identity: string;
  readonly tokenHash: string;
  readonly grant: number;
}
