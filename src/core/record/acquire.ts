import { checkIdentity } from './identities';
import { endRanges, reclaimedText } from './identifierPool';
import { done, type Outcome, refused } from './outcome';
import { type ContainerSettings, type LockRecord, MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from './record';
import { isLive, mayAcquire, nextMove, turnAt } from './turns';

/** The number the next grant of this page takes: the one a new holder's push proof is made for (tokens.ts `pushProof`). */
export function nextGrant(record: LockRecord): number {
  return record.grant + 1;
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
    return refused({ reason: 'invalid-request', what: 'ttl', minMs: MIN_LEASE_TTL_MS, maxMs: MAX_LEASE_TTL_MS });
  }
  const h = record.holder;
  if (h !== null && isLive(h, now)) {
    return h.identity === identity
      ? refused({ reason: 'already-holder', grant: h.grant })
      : refused({
          reason: 'held-by-other',
          holder: h.identity,
          grant: h.grant,
          until: h.expiresAt,
          next: nextMove(record, settings, identity, now),
        });
  }
  if (!mayAcquire(record, settings, identity, now)) {
    const turn = turnAt(record, settings, now);
    return refused({
      reason: 'not-your-turn',
      turn: turn.current?.identity,
      until: turn.current?.endsAt ?? now,
      next: nextMove(record, settings, identity, now),
    });
  }
  const grant = nextGrant(record);
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

/** An audit detail's time: ISO 8601 in UTC, to the second. */
function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
