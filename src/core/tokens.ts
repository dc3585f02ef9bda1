import * as crypto from 'node:crypto';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const TOKEN_BYTES = 32;
/** Random bytes are drawn for this many tokens at once (as Node's randomUUID does), then wiped as used. */
const POOLED_TOKENS = 64;
let pool = Buffer.alloc(0);
let offset = 0;

/** A new unpredictable owner token: 32 bytes from the system CSPRNG as 64 hex characters. */
export function newOwnerToken(): string {
  if (offset + TOKEN_BYTES > pool.length) {
    pool = randomBytes(TOKEN_BYTES * POOLED_TOKENS);
    offset = 0;
  }
  const token = pool.toString('hex', offset, offset + TOKEN_BYTES);
  pool.fill(0, offset, offset + TOKEN_BYTES);
  offset += TOKEN_BYTES;
  return token;
}

/** SHA-256 as hex, one-shot where the runtime has crypto.hash (Node ≥ 20.12), which skips a Hash object. */
export const sha256Hex: (text: string) => string =
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? text => (crypto as unknown as { hash(algorithm: string, data: string, encoding: 'hex'): string }).hash('sha256', text, 'hex')
    : text => crypto.createHash('sha256').update(text).digest('hex');

/** What stores keep instead of the token itself. */
export function hashToken(token: string): string {
  return sha256Hex(`lockstep-owner\0${token}`);
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
  return sha256Hex(`lockstep-proof\0${proof}`);
}
