import type { SqlDialect } from './databaseUrl';
import { TABLE } from './migration';
import { placeholders } from './sqlBackend';

/**
 * Every statement the driver runs, per dialect. Lease rows are never deleted: release clears the
 * owner and expiry and keeps `fencing`, so the counter survives release and re-acquire.
 */
export interface Statements {
  /** key → kind, owner_hash, fencing, expires_at; locks the row until the transaction ends. */
  readonly lockLease: string;
  /** key → kind, owner_hash, fencing, expires_at; no lock. */
  readonly readLease: string;
  /** key, owner, expiresAt: the unique insert of a key's first lease (fencing 1). */
  readonly insertLease: string;
  /**
   * owner, expiresAt, key, fencingRead, now: takes a free or expired lease and issues the next
   * fencing token. `fencing = fencingRead` makes the new token exactly fencingRead + 1.
   */
  readonly claimFree: string;
  /** expiresAt, key, owner, now: extends this owner's live lease. */
  readonly extend: string;
  /** key, owner, now: the conditional owner "delete" of a live lease (keeps the counter). */
  readonly releaseLive: string;
  /** key, owner: clears this owner's lease whatever its expiry (under the row lock). */
  readonly clearOwner: string;
  /** key → kind, record, revision. */
  readonly readRecord: string;
  /** key, recordJson: the unique insert of a record (revision 1). */
  readonly insertRecord: string;
  /** recordJson, key, expectedRevision: compare-and-swap on the revision. */
  readonly updateRecord: string;
  /**
   * PostgreSQL only: `insertRecord` and `updateRecord` that also send `NOTIFY` on the record's
   * channel (one more parameter, last) with the new revision as payload. One statement each, so the
   * notification belongs to the write's own transaction: sent when it commits, never when it fails.
   */
  readonly notifying?: { readonly insertRecord: string; readonly updateRecord: string };
}

export function statementsFor(dialect: SqlDialect): Statements {
  // SQLite has no row locks; its transactions start with BEGIN IMMEDIATE (the database write lock).
  const forUpdate = dialect === 'sqlite' ? '' : ' FOR UPDATE';
  // MySQL's duplicate-key error does not abort the transaction; the MySQL session counts it as 0 rows.
  const onDuplicateNothing = dialect === 'mysql' ? '' : ' ON CONFLICT (key_hash) DO NOTHING';
  const leaseColumns = 'kind, owner_hash, fencing, expires_at';
  const all: Statements = {
    lockLease: `SELECT ${leaseColumns} FROM ${TABLE} WHERE key_hash = ?${forUpdate}`,
    readLease: `SELECT ${leaseColumns} FROM ${TABLE} WHERE key_hash = ?`,
    insertLease: `INSERT INTO ${TABLE} (key_hash, kind, owner_hash, fencing, expires_at, record, revision) VALUES (?, 'lease', ?, 1, ?, NULL, 0)${onDuplicateNothing}`,
    claimFree: `UPDATE ${TABLE} SET owner_hash = ?, expires_at = ?, fencing = fencing + 1 WHERE key_hash = ? AND kind = 'lease' AND fencing = ? AND (owner_hash IS NULL OR expires_at <= ?)`,
    extend: `UPDATE ${TABLE} SET expires_at = ? WHERE key_hash = ? AND kind = 'lease' AND owner_hash = ? AND expires_at > ?`,
    releaseLive: `UPDATE ${TABLE} SET owner_hash = NULL, expires_at = 0 WHERE key_hash = ? AND kind = 'lease' AND owner_hash = ? AND expires_at > ?`,
    clearOwner: `UPDATE ${TABLE} SET owner_hash = NULL, expires_at = 0 WHERE key_hash = ? AND kind = 'lease' AND owner_hash = ?`,
    readRecord: `SELECT kind, record, revision FROM ${TABLE} WHERE key_hash = ?`,
    insertRecord: `INSERT INTO ${TABLE} (key_hash, kind, owner_hash, fencing, expires_at, record, revision) VALUES (?, 'record', NULL, 0, 0, ?, 1)${onDuplicateNothing}`,
    updateRecord: `UPDATE ${TABLE} SET record = ?, revision = revision + 1 WHERE key_hash = ? AND kind = 'record' AND revision = ?`,
  };
  const statements = Object.fromEntries(Object.entries(all).map(([k, sql]) => [k, placeholders(dialect, sql)])) as unknown as Statements;
  if (dialect !== 'postgres') return statements;
  // The write's RETURNING feeds pg_notify: no row written, no notification.
  const notify = (write: string) =>
    placeholders(dialect, `WITH written AS (${write} RETURNING revision) SELECT pg_notify(?, CAST(revision AS text)) FROM written`);
  return { ...statements, notifying: { insertRecord: notify(all.insertRecord), updateRecord: notify(all.updateRecord) } };
}
