import { hasControls } from '../safeText';
import { type Outcome, refused } from './outcome';
import { type LockRecord, MAX_IDENTITY_LENGTH } from './record';

/** The people on a page: whether an identity is well formed, and whether the page has seen it. */

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
export function checkKnown(record: LockRecord, to: string, newIdentity: boolean | undefined): Outcome<never> | undefined {
  if (newIdentity === true || knownIdentities(record).has(to)) return undefined;
  return refused({ reason: 'new-identity', identity: to });
}

/** An identity is 1 to {@link MAX_IDENTITY_LENGTH} printable characters (usually an e-mail address). */
export function checkIdentity(identity: string): Outcome<never> | undefined {
  if (typeof identity !== 'string' || identity.trim() === '' || identity.length > MAX_IDENTITY_LENGTH || hasControls(identity)) {
    return refused({ reason: 'invalid-request', what: 'identity', maxLength: MAX_IDENTITY_LENGTH });
  }
  return undefined;
}
