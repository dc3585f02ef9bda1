import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new unpredictable owner token: 32 random bytes as 64 hex characters. */
export function newOwnerToken(): string {
  return randomBytes(32).toString('hex');
}

/** What stores keep instead of the token itself. */
export function hashToken(token: string): string {
  return createHash('sha256').update('lockstep-owner\0').update(token).digest('hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * The proof a clone sends with its pushes: an HMAC of the grant under the owner token. The server
 * compares its hash with the one in the record; the record and the repository hold only hashes, so
 * neither lets anyone forge it.
 */
export function pushProof(token: string, container: string, grant: number): string {
  return createHmac('sha256', token).update(`lockstep-push\0${container}\0${grant}`).digest('hex');
}

export function hashProof(proof: string): string {
  return createHash('sha256').update('lockstep-proof\0').update(proof).digest('hex');
}
