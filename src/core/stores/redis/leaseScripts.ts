import type { ClaimResult, ReleaseResult } from '../store';
import { defineScript, evalScript, type ScriptClient } from './evalScript';

/**
 * The plain lease (docs/leases.md#handles) in Redis, one script (one round trip) per operation. The lease key holds
 * the owner's hash and expires by itself (Redis owns the TTL); the fence key is a bare counter
 * without TTL, so a token is never issued twice for a key, across release and expiry alike.
 */

// KEYS[1] lease key, KEYS[2] fence key; ARGV[1] owner hash, ARGV[2] TTL in ms.
const CLAIM = defineScript(
  `
-- Take the lease only if no live lease exists (an expired one is already gone: Redis removed it).
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end
-- Issue the next fencing token in the same atomic step.
return redis.call('INCR', KEYS[2])
`,
  2,
);

// KEYS[1] lease key; ARGV[1] owner hash, ARGV[2] TTL in ms.
const EXTEND = defineScript(
  `
-- Only the live owner may extend; a missing key means the lease expired or was released.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
-- Restart the TTL from now (server time).
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
`,
  1,
);

// KEYS[1] lease key; ARGV[1] owner hash.
const RELEASE = defineScript(
  `
local owner = redis.call('GET', KEYS[1])
-- Nothing live: never claimed, released before, or expired (Redis cannot tell these apart).
if not owner then
  return 0
end
-- Someone else holds it now: leave their lease intact.
if owner ~= ARGV[1] then
  return -1
end
-- Ours: delete it. The fence key stays, keeping the counter.
redis.call('DEL', KEYS[1])
return 1
`,
  1,
);

export function claimLease(
  client: ScriptClient,
  leaseKey: string,
  fenceKey: string,
  ownerHash: string,
  ttlMs: number,
  now: number,
): Promise<ClaimResult> {
  return evalScript(client, CLAIM, [leaseKey, fenceKey, ownerHash, ttlMs]).then((reply): ClaimResult => {
    const token = Number(reply);
    return token > 0 ? { claimed: true, fencingToken: token, expiresAt: now + ttlMs } : { claimed: false };
  });
}

export function extendLease(client: ScriptClient, leaseKey: string, ownerHash: string, ttlMs: number): Promise<boolean> {
  return evalScript(client, EXTEND, [leaseKey, ownerHash, ttlMs]).then(reply => Number(reply) === 1);
}

export function releaseLease(client: ScriptClient, leaseKey: string, ownerHash: string): Promise<ReleaseResult> {
  return evalScript(client, RELEASE, [leaseKey, ownerHash]).then((reply): ReleaseResult => {
    const outcome = Number(reply);
    return outcome === 1 ? 'released' : outcome === -1 ? 'other-owner' : 'absent';
  });
}
