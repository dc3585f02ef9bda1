import { endRanges, mergeSpans, reclaimedText, spansText } from './identifierPool';
import { done, lapsed, type Outcome, refused } from './outcome';
import type { Caution, ContainerSettings, Holder, HolderProof, LockRecord } from './record';
import { holds, lapseOf } from './turns';

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
    return lapsed(lapseOf(record, request.settings, proof.identity, proof.grant, now));
  }
  const { landed } = request;
  if (landed !== undefined && !LANDED_COMMIT.test(landed)) {
    return refused({ reason: 'invalid-request', what: 'landed-commit' });
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

/**
 * What a release of `grant` recorded, read back from its audit line (for a release run again after its answer was
 * lost): the commit it named landed (null: nothing landed) and how many identifiers it reclaimed. Undefined when
 * the audit holds no such line (trimmed away, or never written).
 */
export function releaseRecorded(record: LockRecord, grant: number): { landed: string | null; reclaimed: number } | undefined {
  const line = [...record.audit].reverse().find(l => l.action === 'release' && l.outcome === 'done' && l.grant === grant);
  if (line === undefined) return undefined;
  const detail = line.detail ?? '';
  return {
    landed: /^landed ([0-9a-f]{7,64})(?:;|$)/.exec(detail)?.[1] ?? null,
    reclaimed: Number(/(?:^|; )reclaimed (\d{1,15}) unused identifiers?(?:;|$)/.exec(detail)?.[1] ?? 0),
  };
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
