import { checkIdentity, checkKnown } from './identities';
import { spansText, takeFromPool } from './identifierPool';
import { done, type Outcome, refused } from './outcome';
import { type ContainerSettings, type HolderProof, type IdSpan, type LockRecord, MAX_IDS_PER_LEASE } from './record';
import { holds, nextMove } from './turns';

/**
 * Identifiers (docs/protocol.md#identifiers): the lead leases ranges to people and mints from the
 * pool; a lessee mints from its own range. The arithmetic is identifierPool.ts's.
 */

export function leaseIds(
  record: LockRecord,
  proof: HolderProof,
  request: { to: string; count: number; newIdentity?: boolean },
  now: number,
  settings?: ContainerSettings,
): Outcome<{ start: number; end: number; spans: IdSpan[] }> {
  if (!holds(record, proof.tokenHash, proof.grant, now)) {
    return refused({ reason: 'not-holder', what: 'lease-ids', next: nextMove(record, settings, proof.identity, now) });
  }
  const invalid = checkIdentity(request.to) ?? checkKnown(record, request.to, request.newIdentity);
  if (invalid) return invalid;
  if (!Number.isSafeInteger(request.count) || request.count < 1 || request.count > MAX_IDS_PER_LEASE) {
    return refused({ reason: 'invalid-request', what: 'id-count', max: MAX_IDS_PER_LEASE });
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
    return refused({ reason: 'no-range' });
  }
  const index = record.ranges.findIndex(r => r.to === request.identity && r.grant === record.grant && r.next <= r.end);
  if (index < 0) return refused({ reason: 'range-exhausted' });
  const range = record.ranges[index];
  const ranges = record.ranges.map((r, i) => (i === index ? { ...r, next: r.next + 1 } : r));
  return done(
    { ...record, ranges },
    { id: range.next },
    { at: now, who: request.identity, action: 'next-id', grant: record.grant, detail: String(range.next) },
  );
}
