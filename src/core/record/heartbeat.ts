import { done, lapsed, type Outcome } from './outcome';
import { type ContainerSettings, type Holder, type HolderProof, type LockRecord, MAX_HOLD_MS } from './record';
import { holds, lapseOf } from './turns';

/** Extends the live holder's lease by its grant's own TTL ({@link Holder.ttlMs}), never past 24 h from the grant. */
export function heartbeat(
  record: LockRecord,
  settings: ContainerSettings,
  proof: HolderProof,
  now: number,
): Outcome<{ expiresAt: number }> {
  if (!holds(record, proof.tokenHash, proof.grant, now)) {
    return lapsed(lapseOf(record, settings, proof.identity, proof.grant, now));
  }
  const h = record.holder as Holder;
  const expiresAt = Math.min(now + h.ttlMs, h.grantedAt + MAX_HOLD_MS);
  const next: LockRecord = { ...record, holder: { ...h, expiresAt: Math.max(expiresAt, h.expiresAt) } };
  return done(next, { expiresAt: Math.max(expiresAt, h.expiresAt) }, { at: now, who: h.identity, action: 'heartbeat', grant: h.grant });
}
