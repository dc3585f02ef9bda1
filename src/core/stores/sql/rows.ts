import { LockStorageError } from '../../errors';
import { unpackPage } from '../packedPage';
import type { VersionedRecord } from '../store';
import type { SqlRow } from './sqlBackend';

/**
 * Reading stored rows safely: a row that does not have the shape Lockstep writes is damaged and
 * raises LockStorageError; it is never read as a free lease or an empty record.
 */

export interface LeaseRow {
  readonly owner: string | null;
  readonly fencing: number;
  readonly expiresAt: number;
}

const HASH = /^[0-9a-f]{64}$/;

export function leaseRow(row: SqlRow): LeaseRow {
  const fencing = integer(row.fencing);
  const expiresAt = integer(row.expires_at);
  const owner = row.owner_hash;
  if (
    row.kind !== 'lease' ||
    fencing === undefined ||
    fencing < 1 ||
    expiresAt === undefined ||
    expiresAt < 0 ||
    !(owner === null || (typeof owner === 'string' && HASH.test(owner)))
  ) {
    throw damaged('lease');
  }
  return { owner: owner as string | null, fencing, expiresAt };
}

export function recordRow(row: SqlRow): VersionedRecord {
  const revision = integer(row.revision);
  if (row.kind !== 'record' || revision === undefined || revision < 1 || typeof row.record !== 'string') throw damaged('record');
  try {
    return { value: unpackPage(JSON.parse(row.record), 'sql'), revision: String(revision) };
  } catch (cause) {
    if (cause instanceof LockStorageError) throw cause;
    throw damaged('record', cause);
  }
}

/** A revision string this driver issued (a positive integer), or undefined. */
export function parseRevision(revision: string): number | undefined {
  if (!/^[1-9]\d{0,15}$/.test(revision)) return undefined;
  const n = Number(revision);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** BIGINT columns arrive as numbers (SQLite, mysql2 small values), strings (pg, mysql2 big numbers) or bigints. */
function integer(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
  if (typeof value === 'bigint')
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined;
  if (typeof value === 'string' && /^-?\d{1,16}$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}

function damaged(kind: 'lease' | 'record', cause?: unknown): LockStorageError {
  return new LockStorageError(
    'sql',
    `A ${kind} row in the reliability_locks table is damaged, so it cannot be treated as free. Stop the processes using this namespace, then repair or delete that row (deleting a lease row restarts its fencing counter).`,
    cause === undefined ? {} : { cause },
  );
}
