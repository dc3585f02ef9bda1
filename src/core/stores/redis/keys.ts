/**
 * Where Lockstep's data lives in Redis: `<prefix>:<kind>:<64-hex digest>`. The digest comes from
 * core (`names.ts`), so no lock name ever reaches Redis; the prefix is the user's namespace.
 *
 * On a Cluster the digest is a hash tag, `<prefix>:<kind>:{<digest>}`, so that every key of one lease
 * or one container (lease, counter, record, channel) lives in one hash slot and each script touches
 * one slot, while different leases spread over the cluster. The tag is the digest, never the name.
 * (One server and Sentinel keep the untagged keys, which existing deployments already hold.)
 */

const DIGEST = /^[0-9a-f]{64}$/;

export interface RedisKeys {
  /** The lease itself: the owner hash, with the lease's TTL as the key's TTL. */
  lease(digest: string): string;
  /** The lease's fencing counter: no TTL, so it survives release and expiry. */
  fence(digest: string): string;
  /** A container record: a hash with the JSON value `v` and the revision `rev`. */
  record(digest: string): string;
  /** The pub/sub channel announcing changes of one record (a channel, not a key). */
  recordChannel(digest: string): string;
  /** A pattern matching every key of this namespace (operators, tests). */
  readonly everything: string;
}

export function redisKeys(prefix: string, options: { hashTags?: boolean } = {}): RedisKeys {
  const of =
    (kind: string) =>
    (digest: string): string => {
      // A guard, not validation: core only ever passes digests. Anything else would be a bug that
      // could put a raw name into Redis, so it fails loudly instead.
      if (!DIGEST.test(digest)) throw new TypeError('The Redis driver accepts only 64-hex-character key digests.');
      return options.hashTags ? `${prefix}:${kind}:{${digest}}` : `${prefix}:${kind}:${digest}`;
    };
  return {
    lease: of('lease'),
    fence: of('fence'),
    record: of('record'),
    recordChannel: of('record-changed'),
    everything: `${prefix}:*`,
  };
}
