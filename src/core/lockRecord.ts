import { HOUR } from './clock';
import {
  LockError, LockLeaseLostError, LockRefusedError, type RefusalReason,
} from './errors';

/**
 * The container's lock record (docs/protocol.md#the-record) and its transitions. Every transition is a
 * pure function `(record, request, now) → outcome`: no I/O, no clock, no randomness. The container
 * service applies them through a driver's compare-and-swap.
 */

/** docs/protocol.md#caps: a lease is never extended past 24 hours from its grant. */
export const MAX_HOLD_MS = 24 * HOUR;
/** The record keeps this many audit lines; older ones stay in the git driver's history only. */
export const MAX_AUDIT_LINES = 500;
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
  readonly to: string;
  readonly text: string;
  readonly grant: number;
  readonly at: number;
}

export type AuditAction =
  | 'acquire' | 'heartbeat' | 'release' | 'petition' | 'withdraw' | 'lease-ids' | 'next-id' | 'assign' | 'clear';

export interface AuditLine {
  readonly at: number;
  readonly who: string;
  readonly action: AuditAction;
  /** The grant the line is about (the holder's grant for clears). */
  readonly grant: number;
  readonly outcome: 'done' | 'refused';
  readonly detail?: string;
  /** Consecutive heartbeats of one grant are folded into one line. */
  readonly count?: number;
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
  readonly blocks: readonly Block[];
  readonly audit: readonly AuditLine[];
}

export function emptyRecord(container: string): LockRecord {
  return { v: 1, container, grant: 0, holder: null, releasedAt: null, queue: [], ranges: [], nextId: 1, blocks: [], audit: [] };
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
  return { ok: false, error: new LockRefusedError(reason, message), record: withAudit(record, { ...line, outcome: 'refused' }), summary: summarise(line, 'refused') };
}

function withAudit(record: LockRecord, line: AuditLine): LockRecord {
  const last = record.audit[record.audit.length - 1];
  let audit: AuditLine[];
  // Runs of heartbeats, and of one person's identical refused attempts, fold into one line with a
  // count: neither may push the real history out of the bounded trail.
  const repeats = last !== undefined && last.action === line.action && last.grant === line.grant && last.outcome === line.outcome
    && (line.action === 'heartbeat' && line.outcome === 'done'
      || line.outcome === 'refused' && last.who === line.who && last.detail === line.detail);
  if (repeats) {
    audit = [...record.audit.slice(0, -1), { ...line, count: (last.count ?? 1) + 1 }];
  } else {
    audit = [...record.audit, line];
  }
  if (audit.length > MAX_AUDIT_LINES) audit = audit.slice(audit.length - MAX_AUDIT_LINES);
  return { ...record, audit };
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

function holds(record: LockRecord, tokenHash: string, grant: number, now: number): boolean {
  const h = record.holder;
  return h !== null && h.tokenHash === tokenHash && h.grant === grant && h.grant === record.grant && h.expiresAt > now;
}

function lostMessage(record: LockRecord, grant: number, now: number): string {
  const h = record.holder;
  if (record.grant > grant) {
    return `Your lease (grant #${grant}) is no longer current: grant #${record.grant} was issued since${h ? ` to ${h.identity}` : ''}. Fetch, then petition or acquire again.`;
  }
  if (h && h.grant === grant && h.expiresAt <= now) {
    return `Your lease (grant #${grant}) expired at ${iso(h.expiresAt)}; a lost lease is never revived. Acquire again for a new grant.`;
  }
  return `You do not hold the lock (grant #${grant} is not live). Acquire it first.`;
}

// ---------------------------------------------------------------------------------------------
// Requests

export interface HolderProof {
  readonly identity: string;
  readonly tokenHash: string;
  readonly grant: number;
}

export function acquire(
  record: LockRecord, settings: ContainerSettings,
  request: { identity: string; tokenHash: string; proofHash: string }, now: number,
): Outcome<{ grant: number; expiresAt: number }> {
  const { identity } = request;
  const invalid = checkIdentity(identity);
  if (invalid) return invalid;
  const h = record.holder;
  if (h !== null && isLive(h, now)) {
    return h.identity === identity
      ? refused('already-holder', `You already hold the lock (grant #${h.grant}) from another clone or session; work there, or let it expire.`)
      : refused('held-by-other', `The lock is held by ${h.identity} (grant #${h.grant}) until ${iso(h.expiresAt)}. Petition to join the queue.`);
  }
  if (!mayAcquire(record, settings, identity, now)) {
    const turn = turnAt(record, settings, now);
    return refused('not-your-turn', `It is ${turn.current?.identity ?? 'the queue head'}'s turn until ${iso(turn.current?.endsAt ?? now)}; petition to join the queue.`);
  }
  const grant = record.grant + 1;
  const expiresAt = now + Math.min(settings.leaseTtlMs, MAX_HOLD_MS);
  const next: LockRecord = {
    ...record,
    grant,
    holder: { identity, grant, tokenHash: request.tokenHash, proofHash: request.proofHash, grantedAt: now, expiresAt },
    releasedAt: null,
    queue: record.queue.filter(p => p.identity !== identity),
    // Ranges and blocks belong to a grant; a new grant starts clean (a clear or expiry reclaimed them).
    ranges: [],
    blocks: [],
  };
  const detail = h !== null ? `took over from ${h.identity} (grant #${h.grant}, silent since ${iso(h.expiresAt)})` : undefined;
  return done(next, { grant, expiresAt }, { at: now, who: identity, action: 'acquire', grant, ...(detail ? { detail } : {}) });
}

export function heartbeat(record: LockRecord, settings: ContainerSettings, proof: HolderProof, now: number): Outcome<{ expiresAt: number }> {
  if (!holds(record, proof.tokenHash, proof.grant, now)) {
    return { ok: false, error: new LockLeaseLostError(lostMessage(record, proof.grant, now), proof.grant) };
  }
  const h = record.holder as Holder;
  const expiresAt = Math.min(now + settings.leaseTtlMs, h.grantedAt + MAX_HOLD_MS);
  const next: LockRecord = { ...record, holder: { ...h, expiresAt: Math.max(expiresAt, h.expiresAt) } };
  return done(next, { expiresAt: Math.max(expiresAt, h.expiresAt) }, { at: now, who: h.identity, action: 'heartbeat', grant: h.grant });
}

/** The caller has already checked that the clone's work landed (release is valid only after a push). */
export function release(record: LockRecord, proof: HolderProof, now: number): Outcome<{ grant: number; reclaimed: number }> {
  if (!holds(record, proof.tokenHash, proof.grant, now)) {
    return { ok: false, error: new LockLeaseLostError(lostMessage(record, proof.grant, now), proof.grant) };
  }
  const h = record.holder as Holder;
  const reclaimed = unusedIds(record.ranges);
  const next: LockRecord = { ...record, holder: null, releasedAt: now, ranges: [], blocks: [] };
  return done(next, { grant: h.grant, reclaimed }, { at: now, who: h.identity, action: 'release', grant: h.grant,
    ...(reclaimed > 0 ? { detail: `reclaimed ${reclaimed} unused identifiers` } : {}) });
}

export function petition(record: LockRecord, request: { identity: string; note?: string }, now: number): Outcome<{ position: number }> {
  const invalid = checkIdentity(request.identity);
  if (invalid) return invalid;
  if (record.holder !== null && isLive(record.holder, now) && record.holder.identity === request.identity) {
    return refused('holder-cannot-petition', 'You hold the lock; there is nothing to petition for.');
  }
  if (record.queue.some(p => p.identity === request.identity)) {
    return refused('already-queued', `You are already in the queue at position ${position(record, request.identity)}.`);
  }
  const note = request.note === undefined ? undefined : cleanText(request.note, MAX_NOTE_LENGTH);
  const next: LockRecord = { ...record, queue: [...record.queue, { identity: request.identity, at: now, ...(note ? { note } : {}) }] };
  return done(next, { position: next.queue.length }, { at: now, who: request.identity, action: 'petition', grant: record.grant, ...(note ? { detail: note } : {}) });
}

export function withdraw(record: LockRecord, request: { identity: string }, now: number): Outcome<{ position: number }> {
  const at = position(record, request.identity);
  if (at === 0) return refused('not-queued', 'You are not in the queue.');
  const next: LockRecord = { ...record, queue: record.queue.filter(p => p.identity !== request.identity) };
  return done(next, { position: at }, { at: now, who: request.identity, action: 'withdraw', grant: record.grant });
}

export function leaseIds(record: LockRecord, proof: HolderProof, request: { to: string; count: number }, now: number): Outcome<{ start: number; end: number }> {
  if (!holds(record, proof.tokenHash, proof.grant, now)) {
    return refused('not-holder', 'Only the lead (the live holder) allocates identifiers. Acquire the lock first.');
  }
  const invalid = checkIdentity(request.to);
  if (invalid) return invalid;
  if (!Number.isSafeInteger(request.count) || request.count < 1 || request.count > MAX_IDS_PER_LEASE) {
    return refused('invalid-request', `The count must be a whole number from 1 to ${MAX_IDS_PER_LEASE}.`);
  }
  const start = record.nextId;
  const end = start + request.count - 1;
  const next: LockRecord = {
    ...record,
    nextId: end + 1,
    ranges: [...record.ranges, { to: request.to, start, end, next: start, grant: record.grant, at: now }],
  };
  return done(next, { start, end }, { at: now, who: proof.identity, action: 'lease-ids', grant: record.grant, detail: `${start}-${end} to ${request.to}` });
}

/**
 * Mints one identifier: the lead from the unallocated pool, a lessee from its own range under the
 * current grant. The identifier is consumed by the write that returns it, so a crash after the
 * write loses an identifier but never hands one out twice.
 */
export function nextId(record: LockRecord, request: { identity: string; holder?: HolderProof }, now: number): Outcome<{ id: number }> {
  if (request.holder && holds(record, request.holder.tokenHash, request.holder.grant, now)) {
    const id = record.nextId;
    return done({ ...record, nextId: id + 1 }, { id }, { at: now, who: request.identity, action: 'next-id', grant: record.grant, detail: String(id) });
  }
  const mine = record.ranges.filter(r => r.to === request.identity && r.grant === record.grant);
  if (mine.length === 0) {
    return refused('no-range', 'You have no identifier range under the current grant; ask the lead to lease you one.');
  }
  const index = record.ranges.findIndex(r => r.to === request.identity && r.grant === record.grant && r.next <= r.end);
  if (index < 0) return refused('range-exhausted', 'Your identifier ranges are used up; ask the lead to lease you more.');
  const range = record.ranges[index];
  const ranges = record.ranges.map((r, i) => (i === index ? { ...r, next: r.next + 1 } : r));
  return done({ ...record, ranges }, { id: range.next }, { at: now, who: request.identity, action: 'next-id', grant: record.grant, detail: String(range.next) });
}

export function assign(record: LockRecord, proof: HolderProof, request: { to: string; text: string }, now: number): Outcome<{ index: number }> {
  if (!holds(record, proof.tokenHash, proof.grant, now)) {
    return refused('not-holder', 'Only the lead (the live holder) assigns blocks. Acquire the lock first.');
  }
  const invalid = checkIdentity(request.to);
  if (invalid) return invalid;
  const text = cleanText(request.text, MAX_BLOCK_LENGTH);
  if (text === '') return refused('invalid-request', 'Describe the block of work (--block TEXT).');
  const next: LockRecord = { ...record, blocks: [...record.blocks, { to: request.to, text, grant: record.grant, at: now }] };
  return done(next, { index: next.blocks.length }, { at: now, who: proof.identity, action: 'assign', grant: record.grant, detail: `to ${request.to}: ${text}` });
}

/** The operator's one intervention (docs/protocol.md#holder-silent): only on HOLDER SILENT, only by an operator, only with a reason. */
export function clear(record: LockRecord, settings: ContainerSettings, request: { identity: string; reason: string }, now: number): Outcome<{ clearedGrant: number }> {
  const reason = cleanText(request.reason, MAX_NOTE_LENGTH);
  const grant = record.holder?.grant ?? record.grant;
  const line = { at: now, who: request.identity, action: 'clear' as const, grant };
  if (!settings.operators.includes(request.identity)) {
    return refusedAndAudited(record, 'not-operator', `Only an operator may clear the lock; ${request.identity} is not listed in .lockstep.json's operators.`,
      { ...line, detail: reason || 'no reason given' });
  }
  if (reason === '') {
    return refusedAndAudited(record, 'reason-required', 'Say why the lock is cleared (--reason TEXT); it goes into the audit trail.', line);
  }
  const h = record.holder;
  if (h === null || isLive(h, now)) {
    return refusedAndAudited(record, 'not-silent',
      h === null ? 'The lock is free; there is nothing to clear.' : `The holder ${h.identity} is live until ${iso(h.expiresAt)}; only a HOLDER SILENT lock may be cleared.`,
      { ...line, detail: reason });
  }
  const next: LockRecord = { ...record, holder: null, releasedAt: now, ranges: [], blocks: [] };
  return done(next, { clearedGrant: h.grant }, { ...line, detail: `cleared ${h.identity}: ${reason}` });
}

// ---------------------------------------------------------------------------------------------
// Helpers

function position(record: LockRecord, identity: string): number {
  return record.queue.findIndex(p => p.identity === identity) + 1;
}

function unusedIds(ranges: readonly IdRange[]): number {
  return ranges.reduce((sum, r) => sum + Math.max(0, r.end - r.next + 1), 0);
}

function checkIdentity(identity: string): Outcome<never> | undefined {
  if (typeof identity !== 'string' || identity.trim() === '' || identity.length > MAX_IDENTITY_LENGTH || /[\x00-\x1f\x7f]/.test(identity)) {
    return refused('invalid-request', `An identity must be 1 to ${MAX_IDENTITY_LENGTH} printable characters (usually an e-mail address).`);
  }
  return undefined;
}

/** Control characters out, whitespace folded, length bounded. */
function cleanText(text: string, max: number): string {
  return text.replace(/[\x00-\x1f\x7f]+/g, ' ').replace(/\s+/g, ' ').trim().slice(0, max);
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
