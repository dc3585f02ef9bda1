import { LockStorageError } from './errors';
import { LEGACY_MIN_LEASE_TTL_MS, MAX_LEASE_TTL_MS, type ContainerSettings, type LockRecord } from './lockRecord';

/**
 * The bytes a record is stored as (the git driver's record.json, and what the server guard requires
 * of a pushed record: exactly these bytes for the transition's result, nothing padded or reordered).
 */
export function encodeRecord(record: LockRecord): string {
  return JSON.stringify(record);
}

/**
 * Checks that a stored value is a lock record before anything reads it. A record that fails is
 * damaged: it raises LockStorageError and is never treated as a free lock. `settings` are the
 * container's: a holder written before grants kept their TTL gets the container's `leaseTtlMs`.
 */
export function parseRecord(
  value: unknown,
  driver: string,
  container: string,
  settings: Pick<ContainerSettings, 'leaseTtlMs'>,
): LockRecord {
  const fail = (what: string): never => {
    throw new LockStorageError(
      driver,
      `The container's lock record is damaged (${what}), so the lock cannot be treated as free. Restore it from the store's history or backups; see the README on damaged records.`,
    );
  };
  if (!isObject(value)) return fail('not an object');
  if (value.v !== 1) return fail('unknown version');
  if (value.container !== container) return fail('it belongs to another container');
  if (!isCount(value.grant)) return fail('grant');
  if (!isCount(value.nextId) || (value.nextId as number) < 1) return fail('next identifier');
  if (!(value.releasedAt === null || isTime(value.releasedAt))) return fail('release time');
  if (value.holder !== null) {
    const h = value.holder;
    if (
      !isObject(h) ||
      !isText(h.identity) ||
      !isCount(h.grant) ||
      h.grant !== value.grant ||
      !isHex(h.tokenHash) ||
      !isHex(h.proofHash) ||
      !isTime(h.grantedAt) ||
      !isTime(h.expiresAt)
    )
      return fail('holder');
    // A grant's lease length is the container's (60 s to 24 h) for every new grant (lockRecord.acquire, and the git
    // guard for pushed acquires). A holder stored before that floor, with 1 s to 59 s, still reads as it was stored:
    // the page stays readable and that lease runs out on its own (its heartbeats keep its own length, as granted).
    if (
      h.ttlMs !== undefined &&
      !(Number.isSafeInteger(h.ttlMs) && (h.ttlMs as number) >= LEGACY_MIN_LEASE_TTL_MS && (h.ttlMs as number) <= MAX_LEASE_TTL_MS)
    ) {
      return fail("the holder's lease length");
    }
  }
  if (!Array.isArray(value.queue) || !value.queue.every(p => isObject(p) && isText(p.identity) && isTime(p.at))) return fail('queue');
  if (new Set(value.queue.map(p => (p as { identity: string }).identity)).size !== value.queue.length) return fail('a person queued twice');
  if (
    !Array.isArray(value.ranges) ||
    !value.ranges.every(
      r =>
        isObject(r) &&
        isText(r.to) &&
        isCount(r.start) &&
        isCount(r.end) &&
        isCount(r.next) &&
        isCount(r.grant) &&
        (r.start as number) <= (r.next as number) &&
        (r.next as number) <= (r.end as number) + 1 &&
        (r.end as number) < (value.nextId as number),
    )
  )
    return fail('identifier ranges');
  if (
    !Array.isArray(value.blocks) ||
    !value.blocks.every(b => isObject(b) && isText(b.to) && typeof b.text === 'string' && (b.id === undefined || isCount(b.id)))
  )
    return fail('blocks');
  if (
    !Array.isArray(value.audit) ||
    !value.audit.every(
      a =>
        isObject(a) &&
        isTime(a.at) &&
        typeof a.who === 'string' &&
        typeof a.action === 'string' &&
        (a.since === undefined || isTime(a.since)),
    )
  )
    return fail('audit');
  // Fields added after the first records: absent means none yet.
  const pool = value.pool ?? [];
  if (
    !Array.isArray(pool) ||
    !pool.every(
      (r, i) =>
        isObject(r) &&
        isCount(r.start) &&
        isCount(r.end) &&
        (r.start as number) >= 1 &&
        (r.start as number) <= (r.end as number) &&
        (r.end as number) < (value.nextId as number) &&
        (i === 0 || (r.start as number) > (pool[i - 1] as { end: number }).end + 1),
    )
  )
    return fail('identifier pool');
  // No identifier in two places: the ranges and the pool are pairwise disjoint, or one could be issued twice.
  const spans = [...(value.ranges as { start: number; end: number }[]), ...(pool as { start: number; end: number }[])]
    .map(r => ({ start: r.start, end: r.end }))
    .sort((a, b) => a.start - b.start);
  if (spans.some((r, i) => i > 0 && r.start <= spans[i - 1].end)) return fail('identifier ranges overlapping each other or the pool');
  const caution = value.caution ?? null;
  if (
    !(
      caution === null ||
      (isObject(caution) &&
        isCount(caution.silentGrant) &&
        (caution.silentGrant as number) <= (value.grant as number) &&
        isTime(caution.since) &&
        isText(caution.by))
    )
  )
    return fail('caution mark');
  // Blocks written before blocks had numbers get theirs from their place on the page.
  const blocks = (value.blocks as Record<string, unknown>[]).map((b, i) => (b.id === undefined ? { ...b, id: i + 1 } : b));
  const lastBlock = value.lastBlock ?? Math.max(0, ...blocks.map(b => b.id as number));
  if (
    !isCount(lastBlock) ||
    blocks.some(b => (b.id as number) < 1 || (b.id as number) > (lastBlock as number)) ||
    new Set(blocks.map(b => b.id)).size !== blocks.length
  )
    return fail('block numbers');
  // A holder written before grants kept their own TTL: the container's, which its heartbeats used.
  const holder =
    isObject(value.holder) && value.holder.ttlMs === undefined ? { ...value.holder, ttlMs: settings.leaseTtlMs } : value.holder;
  return { ...value, holder, pool, caution, blocks, lastBlock } as unknown as LockRecord;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
function isCount(v: unknown): boolean {
  return Number.isSafeInteger(v) && (v as number) >= 0;
}
function isTime(v: unknown): boolean {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}
function isText(v: unknown): boolean {
  return typeof v === 'string' && v.length > 0;
}
function isHex(v: unknown): boolean {
  return typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);
}
