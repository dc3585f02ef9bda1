import { HOUR, SECOND } from './clock';
import { formatClock } from './format';
import { type LockError, LockLeaseLostError, LockRefusedError, type RefusalReason } from './errors';
import { cleanText, hasControls } from './safeText';

/**
 * The container's lock record (docs/protocol.md#the-record) and its transitions. Every transition is a
 * pure function `(record, request, now) → outcome`: no I/O, no clock, no randomness. The container
 * service applies them through a driver's compare-and-swap.
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
 * keeps, see {@link keptForever}); older ones stay in the git driver's history only. Refused
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
const UTF8 = new TextEncoder();
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
  /** The live holder announces a landing before pushing it: `<branch> <from>..<to>` ({@link announceLanding}). */
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
 * a landing by a holder of a grant later than `silentGrant` ({@link liftsCaution}); a release with
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

/** The page before anything happened on it. Stored only through {@link createPage} or {@link adoptPage}. */
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

// ---------------------------------------------------------------------------------------------
// Outcomes

export type Outcome<T> =
  | { readonly ok: true; readonly record: LockRecord; readonly value: T; readonly summary: string }
  /** `record`, when present, is the refusal's audit line to persist before reporting the error. */
  | { readonly ok: false; readonly error: LockError; readonly record?: LockRecord; readonly summary?: string };

function done<T>(record: LockRecord, value: T, line: Omit<AuditLine, 'outcome'>): Outcome<T> {
  return { ok: true, record: withAudit(record, { ...line, outcome: 'done' }), value, summary: summarise(line, 'done') };
}

function refused(reason: RefusalReason, message: string): Outcome<never> {
  return { ok: false, error: new LockRefusedError(reason, message) };
}

/** A refusal that is itself recorded (operator clear attempts, docs/protocol.md#holder-silent). */
function refusedAndAudited(record: LockRecord, reason: RefusalReason, message: string, line: Omit<AuditLine, 'outcome'>): Outcome<never> {
  return {
    ok: false,
    error: new LockRefusedError(reason, message),
    record: withAudit(record, { ...line, outcome: 'refused' }),
    summary: summarise(line, 'refused'),
  };
}

/**
 * Appends the transition's (or refused attempt's) line: always the trail's last, which the server
 * guard reads. Folding keeps floods small: a heartbeat folds into its grant's heartbeat line when
 * that is the last transition (refused attempts in between do not break the run), and a refused
 * attempt folds into the same person's earlier refused line of the same action, wherever it is,
 * whatever its grant or detail (a presented grant varies at will): the folded line moves to the end
 * with a count, the first one's time (`since`) and the latest time, grant and detail.
 */
function withAudit(record: LockRecord, line: AuditLine): LockRecord {
  const folds = (l: AuditLine) =>
    line.outcome === 'refused'
      ? l.outcome === 'refused' && l.who === line.who && l.action === line.action
      : line.action === 'heartbeat' && l.action === 'heartbeat' && l.outcome === 'done' && l.grant === line.grant;
  const at = line.outcome === 'refused' ? findLast(record.audit, folds) : lastTransition(record.audit, folds);
  if (at < 0) return { ...record, audit: boundAudit([...record.audit, line]) };
  const earlier = record.audit[at];
  const folded: AuditLine = {
    ...line,
    count: (earlier.count ?? 1) + 1,
    ...(line.outcome === 'refused' ? { since: earlier.since ?? earlier.at } : {}),
  };
  return { ...record, audit: boundAudit([...record.audit.slice(0, at), ...record.audit.slice(at + 1), folded]) };
}

/** The index of the last line that `match`es, or -1. */
function findLast(audit: readonly AuditLine[], match: (line: AuditLine) => boolean): number {
  for (let i = audit.length - 1; i >= 0; i--) if (match(audit[i])) return i;
  return -1;
}

/** The index of the last transition (refused attempts skipped) when it `match`es, else -1. */
function lastTransition(audit: readonly AuditLine[], match: (line: AuditLine) => boolean): number {
  const i = findLast(audit, l => l.outcome !== 'refused');
  return i >= 0 && match(audit[i]) ? i : -1;
}

/**
 * Seed 001: every clear by the operator carries its audit line. An operator's clear (a `clear` line
 * with outcome `done`) is never dropped from the page, however many other lines come after it.
 * Refused clear attempts are not clears: anyone can make them, so they are bounded like any other
 * line (and folded when one person repeats one).
 */
export function keptForever(line: AuditLine): boolean {
  return line.action === 'clear' && line.outcome === 'done';
}

/**
 * Two sections, each with its own budget. Refused attempts (outcome `refused`) keep the newest
 * {@link MAX_REFUSAL_LINES} within {@link MAX_REFUSAL_BYTES}. Transitions: the lines kept forever
 * ({@link keptForever}) all stay; the others keep the newest {@link MAX_AUDIT_LINES}, then the
 * oldest of them go until the transitions fit {@link MAX_AUDIT_BYTES}. Were the kept-forever lines
 * alone past the budget, the trail stays past it: no clear line is ever dropped to make room (the
 * docs say so). Neither section's lines count against the other's budget, so no number of refused
 * attempts pushes out a transition. The newest line always stays.
 */
export function boundAudit(audit: readonly AuditLine[]): AuditLine[] {
  const keep = audit.map(() => true);
  const refusal = (l: AuditLine) => l.outcome === 'refused';
  trimOldest(audit, keep, refusal, refusal, MAX_REFUSAL_LINES, MAX_REFUSAL_BYTES);
  trimOldest(
    audit,
    keep,
    l => !refusal(l) && !keptForever(l),
    l => !refusal(l),
    MAX_AUDIT_LINES,
    MAX_AUDIT_BYTES,
  );
  return audit.filter((_, i) => keep[i]);
}

/**
 * Drops the oldest `droppable` lines until at most `maxLines` of them remain and the lines `counted`
 * (the droppable ones and those of their section that never go) fit `maxBytes`. The newest line is
 * the transition's own (the server guard reads it): it always stays.
 */
function trimOldest(
  audit: readonly AuditLine[],
  keep: boolean[],
  droppable: (l: AuditLine) => boolean,
  counted: (l: AuditLine) => boolean,
  maxLines: number,
  maxBytes: number,
): void {
  let lines = 0;
  let bytes = 0;
  for (const l of audit) {
    if (droppable(l)) lines++;
    if (counted(l)) bytes += lineBytes(l);
  }
  for (let i = 0; i < audit.length - 1 && (lines > maxLines || bytes > maxBytes); i++) {
    if (!droppable(audit[i])) continue;
    keep[i] = false;
    lines--;
    bytes -= lineBytes(audit[i]);
  }
}

/**
 * A line's share of the budget: its JSON in UTF-8 and a separator. Lines are immutable and carried
 * from record to record, so each is measured once (a cache with no effect on any result).
 */
const measured = new WeakMap<AuditLine, number>();
function lineBytes(line: AuditLine): number {
  let bytes = measured.get(line);
  if (bytes === undefined) {
    bytes = UTF8.encode(JSON.stringify(line)).length + 1;
    measured.set(line, bytes);
  }
  return bytes;
}

/** One line, for the git driver's commit messages and logs. Identities only, never tokens. */
export function summarise(line: Omit<AuditLine, 'outcome'>, outcome: 'done' | 'refused'): string {
  const detail = line.detail ? `: ${line.detail}` : '';
  return `${line.action} ${outcome === 'refused' ? 'refused ' : ''}by ${line.who} (grant #${line.grant})${detail}`;
}

// ---------------------------------------------------------------------------------------------
// Who may act

export function isLive(holder: Holder | null, now: number): boolean {
  return holder !== null && holder.expiresAt > now;
}

/** When the current handover window sequence started, or null when anyone may acquire. */
function windowStart(record: LockRecord, now: number): number | null {
  if (record.holder !== null) return record.holder.expiresAt <= now ? record.holder.expiresAt : null;
  return record.releasedAt;
}

export interface Turn {
  /** Identities that may acquire now (empty: anyone may). */
  readonly eligible: readonly string[];
  /** The identity whose own window runs now, and when it ends; undefined when anyone may. */
  readonly current?: { readonly identity: string; readonly endsAt: number };
}

/**
 * After a release (or a holder's expiry, or a clear) the queue head alone may acquire for one
 * window; past it the next waiter may too, and so on; once every waiter's window has passed,
 * anyone may.
 */
export function turnAt(record: LockRecord, settings: ContainerSettings, now: number): Turn {
  const start = windowStart(record, now);
  if (start === null || record.queue.length === 0) return { eligible: [] };
  const passed = Math.max(0, Math.floor((now - start) / settings.windowMs));
  if (passed >= record.queue.length) return { eligible: [] };
  const eligible = record.queue.slice(0, passed + 1).map(p => p.identity);
  return { eligible, current: { identity: record.queue[passed].identity, endsAt: start + (passed + 1) * settings.windowMs } };
}

export function mayAcquire(record: LockRecord, settings: ContainerSettings, identity: string, now: number): boolean {
  if (isLive(record.holder, now)) return false;
  const { eligible } = turnAt(record, settings, now);
  return eligible.length === 0 || eligible.includes(identity);
}

/** Whether the session (token hash and grant) is the live holder of the current grant. */
export function holds(record: LockRecord, tokenHash: string, grant: number, now: number): boolean {
  const h = record.holder;
  return h !== null && h.tokenHash === tokenHash && h.grant === grant && h.grant === record.grant && h.expiresAt > now;
}

/**
 * What `identity` can do next about the lock, as advice that would not itself be refused now:
 * acquire when it may, wait when it is queued, petition otherwise (docs/protocol.md#transitions).
 */
export function nextStep(record: LockRecord, settings: ContainerSettings | undefined, identity: string, now: number): string {
  const h = record.holder;
  if (h !== null && isLive(h, now) && h.identity === identity) {
    return `you hold the lock (grant #${h.grant}) in another clone or session: work there, or let that lease expire`;
  }
  // Without the container's settings the handover windows are unknown: point at the status.
  if (settings === undefined) return 'see `lockstep status` for your next step';
  if (mayAcquire(record, settings, identity, now)) return 'acquire it now (lockstep acquire)';
  const at = position(record, identity);
  if (at > 0) return `you are at position ${at} of ${record.queue.length} in the queue: wait for your turn (lockstep wait)`;
  return 'petition to join the queue (lockstep petition)';
}

function sentence(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** Why a grant this person held is no longer live, in words true for them, and what to do next. */
export function lapseMessage(
  record: LockRecord,
  settings: ContainerSettings | undefined,
  identity: string,
  grant: number,
  now: number,
): string {
  const h = record.holder;
  const next = sentence(nextStep(record, settings, identity, now));
  if (record.grant > grant) {
    const to = h === null ? '' : h.identity === identity ? ' to you in another clone or session' : ` to ${h.identity}`;
    return `Your lease (grant #${grant}) has ended: grant #${record.grant} was issued since${to}. ${next}`;
  }
  if (h !== null && h.grant === grant && h.expiresAt <= now) {
    return `Your lease (grant #${grant}) expired at ${formatClock(h.expiresAt)}; a lapsed lease is never revived. ${next}`;
  }
  if (h === null && record.grant === grant) {
    const cleared = record.caution?.silentGrant === grant;
    return `Your lease (grant #${grant}) has ended: ${cleared ? `${record.caution!.by} cleared it at ${formatClock(record.caution!.since)}` : 'it was released'}. ${next}`;
  }
  return `You do not hold the lock (grant #${grant} is not live). ${next}`;
}

// ---------------------------------------------------------------------------------------------
// Requests

export interface HolderProof {
  readonly identity: string;
  readonly tokenHash: string;
  readonly grant: number;
}

/**
 * A new grant for `identity`, with the lease length `ttlMs` (default: the container's
 * `leaseTtlMs`), which the grant keeps: refused outside {@link MIN_LEASE_TTL_MS}–{@link MAX_LEASE_TTL_MS}.
 */
export function acquire(
  record: LockRecord,
  settings: ContainerSettings,
  request: { identity: string; tokenHash: string; proofHash: string; ttlMs?: number },
  now: number,
): Outcome<{ grant: number; expiresAt: number }> {
  const { identity } = request;
  const invalid = checkIdentity(identity);
  if (invalid) return invalid;
  const ttlMs = request.ttlMs ?? settings.leaseTtlMs;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < MIN_LEASE_TTL_MS || ttlMs > MAX_LEASE_TTL_MS) {
    return refused(
      'invalid-request',
      `A lease lasts ${MIN_LEASE_TTL_MS / SECOND} to ${MAX_LEASE_TTL_MS / SECOND} seconds; ask for a TTL in that range (acquire --ttl S), and heartbeat to keep a short one.`,
    );
  }
  const h = record.holder;
  if (h !== null && isLive(h, now)) {
    return h.identity === identity
      ? refused(
          'already-holder',
          `You already hold the lock (grant #${h.grant}) in another clone or session; work there, or let that lease expire.`,
        )
      : refused(
          'held-by-other',
          `The lock is held by ${h.identity} (grant #${h.grant}) until ${formatClock(h.expiresAt)}. ${sentence(nextStep(record, settings, identity, now))}`,
        );
  }
  if (!mayAcquire(record, settings, identity, now)) {
    const turn = turnAt(record, settings, now);
    return refused(
      'not-your-turn',
      `It is ${turn.current?.identity ?? 'the queue head'}'s turn until ${formatClock(turn.current?.endsAt ?? now)}. ${sentence(nextStep(record, settings, identity, now))}`,
    );
  }
  const grant = record.grant + 1;
  const expiresAt = now + ttlMs;
  const { reclaimed, ...ended } = endRanges(record);
  const next: LockRecord = {
    ...record,
    grant,
    holder: { identity, grant, tokenHash: request.tokenHash, proofHash: request.proofHash, grantedAt: now, expiresAt, ttlMs },
    releasedAt: null,
    queue: record.queue.filter(p => p.identity !== identity),
    // Ranges belong to a grant; a new grant starts without any. A silent holder's grant ends here:
    // the identifiers its ranges leased and nobody minted go back to the pool, as on a release
    // (after a release or a clear there are none left). Blocks stay until marked done.
    ...ended,
    // Taking over from a silent holder marks the copy for caution (seed 001, TPS 5.10).
    caution: h !== null ? { silentGrant: h.grant, since: now, by: identity } : record.caution,
  };
  const detail =
    h !== null
      ? `took over from ${h.identity} (grant #${h.grant}, silent since ${iso(h.expiresAt)})${reclaimed > 0 ? `; ${reclaimedText(reclaimed)}` : ''}`
      : undefined;
  return done(next, { grant, expiresAt }, { at: now, who: identity, action: 'acquire', grant, ...(detail ? { detail } : {}) });
}

/** Extends the live holder's lease by its grant's own TTL ({@link Holder.ttlMs}), never past 24 h from the grant. */
export function heartbeat(
  record: LockRecord,
  settings: ContainerSettings,
  proof: HolderProof,
  now: number,
): Outcome<{ expiresAt: number }> {
  if (!holds(record, proof.tokenHash, proof.grant, now)) {
    return { ok: false, error: new LockLeaseLostError(lapseMessage(record, settings, proof.identity, proof.grant, now), proof.grant) };
  }
  const h = record.holder as Holder;
  const expiresAt = Math.min(now + h.ttlMs, h.grantedAt + MAX_HOLD_MS);
  const next: LockRecord = { ...record, holder: { ...h, expiresAt: Math.max(expiresAt, h.expiresAt) } };
  return done(next, { expiresAt: Math.max(expiresAt, h.expiresAt) }, { at: now, who: h.identity, action: 'heartbeat', grant: h.grant });
}

/**
 * Ends the holder's grant. Release is valid only after a push: the caller has checked that the
 * clone has nothing unpushed, and `landed` is the commit it found landed on the protected branch
 * (undefined: nothing landed under this grant). The audit line says `landed <commit>` or
 * `nothing landed`. The identifiers leased under the grant and never minted go back to the pool.
 * A caution mark ends only when something landed ({@link liftsCaution}); otherwise it stays.
 */
export function release(
  record: LockRecord,
  proof: HolderProof,
  now: number,
  request: { landed?: string; settings?: ContainerSettings } = {},
): Outcome<{ grant: number; reclaimed: number; caution: Caution | null }> {
  if (!holds(record, proof.tokenHash, proof.grant, now)) {
    return {
      ok: false,
      error: new LockLeaseLostError(lapseMessage(record, request.settings, proof.identity, proof.grant, now), proof.grant),
    };
  }
  const { landed } = request;
  if (landed !== undefined && !LANDED_COMMIT.test(landed)) {
    return refused('invalid-request', 'The landed commit must be 7 to 64 lower-case hexadecimal digits.');
  }
  const h = record.holder as Holder;
  // A landing records which leased identifiers its grant's lessees minted (the ones the landed work may use).
  const used =
    landed === undefined ? [] : mergeSpans(record.ranges.filter(r => r.next > r.start).map(r => ({ start: r.start, end: r.next - 1 })));
  const { reclaimed, ...ended } = endRanges(record);
  const caution = liftsCaution(record, landed) ? null : record.caution;
  const next: LockRecord = { ...record, holder: null, releasedAt: now, ...ended, caution };
  const detail = [
    landed !== undefined ? `landed ${landed}` : 'nothing landed',
    used.length > 0 ? `used leased identifiers ${spansText(used)}` : undefined,
    reclaimed > 0 ? reclaimedText(reclaimed) : undefined,
  ]
    .filter(Boolean)
    .join('; ');
  return done(next, { grant: h.grant, reclaimed, caution }, { at: now, who: h.identity, action: 'release', grant: h.grant, detail });
}

/** A full commit id (SHA-1 or SHA-256), as a landing announcement names them. */
export const FULL_COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
/** A protected branch's name as `.lockstep.json` allows it (schemas/lockstep.schema.json). */
const BRANCH_NAME = /^(?!.*(?:\.\.|\/\/|\/\.|\.lock\/|\.lock$|[/.]$))[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}$/;

/** What a landing announcement names: the branch, its tip before the push (null: a new branch) and the commit pushed. */
export interface Landing {
  readonly branch: string;
  readonly from: string | null;
  readonly to: string;
}

/** The audit line's detail of a landing announcement: `main <from>..<to>` (`new` for a branch that did not exist). */
export function landingDetail(landing: Landing): string {
  return `${landing.branch} ${landing.from ?? 'new'}..${landing.to}`;
}

/** The landing a `land` line's detail names, or undefined when the detail is not one. */
export function parseLandingDetail(detail: string | undefined): Landing | undefined {
  const match = /^(\S+) (new|[0-9a-f]{40}|[0-9a-f]{64})\.\.([0-9a-f]{40}|[0-9a-f]{64})$/.exec(detail ?? '');
  if (!match || !BRANCH_NAME.test(match[1])) return undefined;
  return { branch: match[1], from: match[2] === 'new' ? null : match[2], to: match[3] };
}

/**
 * The live holder announces, before pushing, that `to` is about to land on `branch` on top of `from`
 * (docs/protocol.md#landing-announcements). The announcement changes nothing but the audit trail; it
 * is what `lockstep verify` reads where no server guard runs (a forge's required check). Only the
 * live holder of the current grant may announce; announcing a commit that then never lands is harmless.
 */
export function announceLanding(
  record: LockRecord,
  proof: HolderProof,
  landing: Landing,
  now: number,
  settings?: ContainerSettings,
): Outcome<Landing> {
  if (!holds(record, proof.tokenHash, proof.grant, now)) {
    return { ok: false, error: new LockLeaseLostError(lapseMessage(record, settings, proof.identity, proof.grant, now), proof.grant) };
  }
  if (!BRANCH_NAME.test(landing.branch) || (landing.from !== null && !FULL_COMMIT.test(landing.from)) || !FULL_COMMIT.test(landing.to)) {
    return refused('invalid-request', 'A landing names a branch and full commit ids (40 or 64 lower-case hexadecimal digits).');
  }
  const h = record.holder as Holder;
  return done(
    record,
    { branch: landing.branch, from: landing.from, to: landing.to },
    { at: now, who: h.identity, action: 'land', grant: h.grant, detail: landingDetail(landing) },
  );
}

/** The form of a landed commit in a release (and in its audit line, `landed <commit>`). */
export const LANDED_COMMIT = /^[0-9a-f]{7,64}$/;

/**
 * Whether the live holder's release with `landed` (undefined: nothing landed) ends the caution
 * mark: only a release with a landing, by a holder whose grant is later than the silent grant,
 * restores the copy (seed 001: "until a push and release restore it"). False when there is no mark.
 */
export function liftsCaution(record: LockRecord, landed: string | undefined): boolean {
  const c = record.caution;
  const h = record.holder;
  return c !== null && h !== null && landed !== undefined && h.grant > c.silentGrant;
}

export function petition(
  record: LockRecord,
  request: { identity: string; note?: string },
  now: number,
  settings?: ContainerSettings,
): Outcome<{ position: number }> {
  const invalid = checkIdentity(request.identity);
  if (invalid) return invalid;
  if (record.holder !== null && isLive(record.holder, now) && record.holder.identity === request.identity) {
    return refused('holder-cannot-petition', 'You hold the lock; there is nothing to petition for.');
  }
  if (record.queue.some(p => p.identity === request.identity)) {
    const next = settings === undefined ? '' : ` ${sentence(nextStep(record, settings, request.identity, now))}`;
    return refused('already-queued', `You are already in the queue at position ${position(record, request.identity)}.${next}`);
  }
  const note = request.note === undefined ? undefined : cleanText(request.note, MAX_NOTE_LENGTH);
  const next: LockRecord = { ...record, queue: [...record.queue, { identity: request.identity, at: now, ...(note ? { note } : {}) }] };
  return done(
    next,
    { position: next.queue.length },
    { at: now, who: request.identity, action: 'petition', grant: record.grant, ...(note ? { detail: note } : {}) },
  );
}

export function withdraw(record: LockRecord, request: { identity: string }, now: number): Outcome<{ position: number }> {
  const at = position(record, request.identity);
  if (at === 0) return refused('not-queued', 'You are not in the queue.');
  const next: LockRecord = { ...record, queue: record.queue.filter(p => p.identity !== request.identity) };
  return done(next, { position: at }, { at: now, who: request.identity, action: 'withdraw', grant: record.grant });
}

export function leaseIds(
  record: LockRecord,
  proof: HolderProof,
  request: { to: string; count: number; newIdentity?: boolean },
  now: number,
  settings?: ContainerSettings,
): Outcome<{ start: number; end: number; spans: IdSpan[] }> {
  if (!holds(record, proof.tokenHash, proof.grant, now)) {
    return refused(
      'not-holder',
      `Only the lead (the live holder) allocates identifiers. To become the lead: ${nextStep(record, settings, proof.identity, now)}.`,
    );
  }
  const invalid = checkIdentity(request.to) ?? checkKnown(record, request.to, request.newIdentity);
  if (invalid) return invalid;
  if (!Number.isSafeInteger(request.count) || request.count < 1 || request.count > MAX_IDS_PER_LEASE) {
    return refused('invalid-request', `The count must be a whole number from 1 to ${MAX_IDS_PER_LEASE}.`);
  }
  // The pool first, lowest identifiers first; the rest from above everything ever handed out.
  const { taken, pool } = takeFromPool(record.pool, request.count);
  const left = request.count - taken.reduce((sum, r) => sum + r.end - r.start + 1, 0);
  const spans = left > 0 ? [...taken, { start: record.nextId, end: record.nextId + left - 1 }] : taken;
  const next: LockRecord = {
    ...record,
    nextId: left > 0 ? record.nextId + left : record.nextId,
    pool,
    ranges: [
      ...record.ranges,
      ...spans.map(r => ({ to: request.to, start: r.start, end: r.end, next: r.start, grant: record.grant, at: now })),
    ],
  };
  const start = spans[0].start;
  const end = spans[spans.length - 1].end;
  return done(
    next,
    { start, end, spans },
    {
      at: now,
      who: proof.identity,
      action: 'lease-ids',
      grant: record.grant,
      detail: `${spansText(spans)} to ${request.to}`,
      to: request.to,
    },
  );
}

/**
 * Mints one identifier: the lead from the unallocated pool, a lessee from its own range under the
 * current grant. The identifier is consumed by the write that returns it, so a crash after the
 * write loses an identifier but never hands one out twice.
 */
export function nextId(record: LockRecord, request: { identity: string; holder?: HolderProof }, now: number): Outcome<{ id: number }> {
  if (request.holder && holds(record, request.holder.tokenHash, request.holder.grant, now)) {
    const { taken, pool } = takeFromPool(record.pool, 1);
    const id = taken.length > 0 ? taken[0].start : record.nextId;
    const next: LockRecord = taken.length > 0 ? { ...record, pool } : { ...record, nextId: id + 1 };
    return done(next, { id }, { at: now, who: request.identity, action: 'next-id', grant: record.grant, detail: String(id) });
  }
  const mine = record.ranges.filter(r => r.to === request.identity && r.grant === record.grant);
  if (mine.length === 0) {
    return refused('no-range', 'You have no identifier range under the current grant; ask the lead to lease you one.');
  }
  const index = record.ranges.findIndex(r => r.to === request.identity && r.grant === record.grant && r.next <= r.end);
  if (index < 0) return refused('range-exhausted', 'Your identifier ranges are used up; ask the lead to lease you more.');
  const range = record.ranges[index];
  const ranges = record.ranges.map((r, i) => (i === index ? { ...r, next: r.next + 1 } : r));
  return done(
    { ...record, ranges },
    { id: range.next },
    { at: now, who: request.identity, action: 'next-id', grant: record.grant, detail: String(range.next) },
  );
}

export function assign(
  record: LockRecord,
  proof: HolderProof,
  request: { to: string; text: string; newIdentity?: boolean },
  now: number,
  settings?: ContainerSettings,
): Outcome<{ index: number }> {
  if (!holds(record, proof.tokenHash, proof.grant, now)) {
    return refused(
      'not-holder',
      `Only the lead (the live holder) assigns blocks. To become the lead: ${nextStep(record, settings, proof.identity, now)}.`,
    );
  }
  const invalid = checkIdentity(request.to) ?? checkKnown(record, request.to, request.newIdentity);
  if (invalid) return invalid;
  const text = cleanText(request.text, MAX_BLOCK_LENGTH);
  if (text === '') return refused('invalid-request', 'Describe the block of work (--block TEXT).');
  const id = record.lastBlock + 1;
  const next: LockRecord = {
    ...record,
    lastBlock: id,
    blocks: [...record.blocks, { id, to: request.to, text, grant: record.grant, at: now }],
  };
  return done(
    next,
    { index: id },
    {
      at: now,
      who: proof.identity,
      action: 'assign',
      grant: record.grant,
      detail: `block ${id} to ${request.to}: ${text}`,
      to: request.to,
    },
  );
}

/**
 * Marks a block done: the lead (the live holder) or the block's assignee may. Blocks survive the
 * lead's release, a clear and a new grant until this removes them; the audit line keeps the text.
 */
export function markDone(
  record: LockRecord,
  request: { identity: string; block: number; holder?: HolderProof },
  now: number,
): Outcome<{ block: number; to: string }> {
  const block = record.blocks.find(b => b.id === request.block);
  if (block === undefined) {
    return refused(
      'invalid-request',
      `There is no open block ${request.block} on the lock page; \`lockstep status\` lists the open blocks.`,
    );
  }
  const lead = request.holder !== undefined && holds(record, request.holder.tokenHash, request.holder.grant, now);
  if (!lead && block.to !== request.identity) {
    return refused('not-holder', `Only the lead (the live holder) or ${block.to} may mark block ${block.id} done.`);
  }
  const next: LockRecord = { ...record, blocks: record.blocks.filter(b => b.id !== block.id) };
  return done(
    next,
    { block: block.id, to: block.to },
    {
      at: now,
      who: request.identity,
      action: 'done',
      grant: record.grant,
      detail: `block ${block.id} of ${block.to}: ${block.text}`,
      to: block.to,
    },
  );
}

/** What follows a clear, in words true for the queue it left: the head's turn, or a free lock. */
export function afterClear(clearedGrant: number, queueHead: string | null): string {
  return (
    `Cleared grant #${clearedGrant}; the audit trail says why. ` +
    (queueHead === null
      ? 'The lock is free: anyone may acquire it now.'
      : `It is ${queueHead}'s turn (first in the queue) to acquire it, within the handover window.`)
  );
}

/** The operator's one intervention (docs/protocol.md#holder-silent): only on HOLDER SILENT, only by an operator, only with a reason. */
export function clear(
  record: LockRecord,
  settings: ContainerSettings,
  request: { identity: string; reason: string },
  now: number,
): Outcome<{ clearedGrant: number; reclaimed: number; queueHead: string | null }> {
  const invalid = checkIdentity(request.identity);
  if (invalid) return invalid;
  const reason = cleanText(request.reason, MAX_NOTE_LENGTH);
  const grant = record.holder?.grant ?? record.grant;
  const line = { at: now, who: request.identity, action: 'clear' as const, grant };
  if (!settings.operators.includes(request.identity)) {
    return refusedAndAudited(
      record,
      'not-operator',
      `Only an operator may clear the lock; ${request.identity} is not listed in .lockstep.json's operators.`,
      { ...line, detail: reason || 'no reason given' },
    );
  }
  if (reason === '') {
    return refusedAndAudited(record, 'reason-required', 'Say why the lock is cleared (--reason TEXT); it goes into the audit trail.', line);
  }
  const h = record.holder;
  if (h === null || isLive(h, now)) {
    return refusedAndAudited(
      record,
      'not-silent',
      h === null
        ? 'The lock is free; there is nothing to clear.'
        : `The holder ${h.identity} is live until ${formatClock(h.expiresAt)}; only a HOLDER SILENT lock may be cleared.`,
      { ...line, detail: reason },
    );
  }
  // The silent grant ends: its never-minted identifiers go back to the pool, as on a release.
  const { reclaimed, ...ended } = endRanges(record);
  const next: LockRecord = {
    ...record,
    holder: null,
    releasedAt: now,
    ...ended,
    caution: { silentGrant: h.grant, since: now, by: request.identity },
  };
  return done(
    next,
    { clearedGrant: h.grant, reclaimed, queueHead: record.queue[0]?.identity ?? null },
    { ...line, detail: `${clearedPrefix(h.identity, reclaimed)}${reason}` },
  );
}

/**
 * A guard refused a push to a protected branch: the refusal is audited on the page, folded with the
 * same pusher's earlier refused pushes (whatever grant they presented) and bounded with the other
 * refused attempts. Never changes anything but the audit trail.
 */
export function auditRefusedPush(
  record: LockRecord,
  request: { identity: string; grant: number; detail: string },
  now: number,
): Outcome<never> {
  const detail = cleanText(request.detail, MAX_NOTE_LENGTH);
  const identity = cleanText(request.identity, MAX_IDENTITY_LENGTH) || 'unknown';
  const grant = Number.isSafeInteger(request.grant) && request.grant >= 0 ? request.grant : 0;
  return refusedAndAudited(record, 'not-holder', `Push refused: ${detail}`, { at: now, who: identity, action: 'push', grant, detail });
}

// ---------------------------------------------------------------------------------------------
// The page itself

/**
 * Creates the container's page (`lockstep init`): the one record every clone reads. The caller
 * stores it only where no record exists (a compare-and-swap against "no record").
 */
export function createPage(container: string, request: { identity: string }, now: number): Outcome<{ container: string }> {
  const invalid = checkIdentity(request.identity);
  if (invalid) return invalid;
  return done(emptyRecord(container), { container }, { at: now, who: request.identity, action: 'init', grant: 0 });
}

/**
 * Recreates a lost page (an operator, with a reason): grants continue above `grantFloor` and
 * identifiers above `nextIdFloor`, so that no fence accepts an old grant and no identifier minted
 * on the lost page is handed out again. Like {@link createPage}, stored only where no record exists.
 */
export function adoptPage(
  container: string,
  settings: ContainerSettings,
  request: { identity: string; reason: string; grantFloor: number; nextIdFloor: number },
  now: number,
): Outcome<{ container: string; grant: number; nextId: number }> {
  const invalid = checkIdentity(request.identity);
  if (invalid) return invalid;
  if (!settings.operators.includes(request.identity)) {
    return refused(
      'not-operator',
      `Only an operator may adopt a lost lock page; ${request.identity} is not listed in .lockstep.json's operators.`,
    );
  }
  const reason = cleanText(request.reason, MAX_NOTE_LENGTH);
  if (reason === '') return refused('reason-required', 'Say why the page is adopted (--reason TEXT); it goes into the audit trail.');
  const { grantFloor, nextIdFloor } = request;
  if (!Number.isSafeInteger(grantFloor) || grantFloor < 0 || !Number.isSafeInteger(nextIdFloor) || nextIdFloor < 1) {
    return refused('invalid-request', 'The grant floor must be a whole number from 0 and the next identifier a whole number from 1.');
  }
  const record: LockRecord = { ...emptyRecord(container), grant: grantFloor, nextId: nextIdFloor };
  return done(
    record,
    { container, grant: grantFloor, nextId: nextIdFloor },
    {
      at: now,
      who: request.identity,
      action: 'adopt',
      grant: grantFloor,
      detail: `grants continue after #${grantFloor}, identifiers from ${nextIdFloor}: ${reason}`,
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** Every identity the page has seen: holder, queue, ranges, blocks and the audit's people. */
export function knownIdentities(record: LockRecord): Set<string> {
  const known = new Set<string>();
  if (record.holder) known.add(record.holder.identity);
  for (const p of record.queue) known.add(p.identity);
  for (const r of record.ranges) known.add(r.to);
  for (const b of record.blocks) known.add(b.to);
  for (const l of record.audit) {
    known.add(l.who);
    if (l.to !== undefined) known.add(l.to);
  }
  return known;
}

/** A lease or block for someone the page has never seen is most likely a typo: it needs saying so. */
function checkKnown(record: LockRecord, to: string, newIdentity: boolean | undefined): Outcome<never> | undefined {
  if (newIdentity === true || knownIdentities(record).has(to)) return undefined;
  return refused(
    'new-identity',
    `${to} has never appeared on this lock page. Check the spelling; if ${to} is a new teammate, confirm with --new-identity.`,
  );
}

/** The identifiers of `ranges` that were never minted. */
function unmintedSpans(ranges: readonly IdRange[]): IdSpan[] {
  return ranges.filter(r => r.next <= r.end).map(r => ({ start: r.next, end: r.end }));
}

/**
 * A grant ends (release, clear, or takeover of its silent holder): its ranges go, and the
 * identifiers they leased that nobody minted go back to the pool. Minting is a write to the page,
 * so an identifier past a range's `next` was never handed out; one below it never comes back.
 */
function endRanges(record: LockRecord): { ranges: IdRange[]; pool: IdSpan[]; reclaimed: number } {
  const returned = unmintedSpans(record.ranges);
  const reclaimed = unusedIdentifiers(record);
  return { ranges: [], pool: reclaimed > 0 ? mergeSpans([...record.pool, ...returned]) : [...record.pool], reclaimed };
}

/** How many identifiers the record's ranges leased that nobody minted: what ending the grant returns to the pool. */
export function unusedIdentifiers(record: LockRecord): number {
  return unmintedSpans(record.ranges).reduce((sum, r) => sum + r.end - r.start + 1, 0);
}

function reclaimedText(reclaimed: number): string {
  return `reclaimed ${reclaimed} unused identifier${reclaimed === 1 ? '' : 's'}`;
}

/** How a clear's audit line starts, before the reason: `cleared <holder>: ` (and what came back to the pool). */
export function clearedPrefix(holder: string, reclaimed: number): string {
  return `cleared ${holder}${reclaimed > 0 ? ` (${reclaimedText(reclaimed)})` : ''}: `;
}

/** Sorted, disjoint, adjacent spans joined. */
export function mergeSpans(spans: readonly IdSpan[]): IdSpan[] {
  const out: IdSpan[] = [];
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    const last = out[out.length - 1];
    if (last !== undefined && s.start <= last.end + 1) out[out.length - 1] = { start: last.start, end: Math.max(last.end, s.end) };
    else out.push({ ...s });
  }
  return out;
}

/** Up to `count` identifiers from the pool, lowest first. */
function takeFromPool(pool: readonly IdSpan[], count: number): { taken: IdSpan[]; pool: IdSpan[] } {
  const taken: IdSpan[] = [];
  const rest: IdSpan[] = [];
  let left = count;
  for (const span of pool) {
    if (left === 0) {
      rest.push(span);
      continue;
    }
    const size = span.end - span.start + 1;
    const take = Math.min(size, left);
    taken.push({ start: span.start, end: span.start + take - 1 });
    if (take < size) rest.push({ start: span.start + take, end: span.end });
    left -= take;
  }
  return { taken, pool: rest };
}

export function spansText(spans: readonly IdSpan[]): string {
  return spans.map(r => (r.start === r.end ? String(r.start) : `${r.start}-${r.end}`)).join(', ');
}

function position(record: LockRecord, identity: string): number {
  return record.queue.findIndex(p => p.identity === identity) + 1;
}

function checkIdentity(identity: string): Outcome<never> | undefined {
  if (typeof identity !== 'string' || identity.trim() === '' || identity.length > MAX_IDENTITY_LENGTH || hasControls(identity)) {
    return refused(
      'invalid-request',
      `An identity must be 1 to ${MAX_IDENTITY_LENGTH} printable characters, without control or text-direction characters (usually an e-mail address); check git's user.email.`,
    );
  }
  return undefined;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
