import { LockConfigurationError } from '../../errors';
import type { SqlDialect } from './databaseUrl';
import type { SqlBackend } from './sqlBackend';

/**
 * The `reliability_locks` table, one row per lease and one per container record:
 *
 * - `key_hash`   the 64-hex SHA-256 digest core made from the namespace and name (a record row uses
 *                a digest of that digest under a fixed tag, so a lease and a record never share a row)
 * - `kind`       `lease` or `record`, so that a row is never read as the other kind
 * - `owner_hash` SHA-256 of the owner token (never the token); NULL when released
 * - `fencing`    the last fencing token issued for the lease; never lowered, kept across release
 * - `expires_at` lease expiry, epoch milliseconds of the application clock (indexed)
 * - `record`     a container record's JSON text
 * - `revision`   a container record's revision, +1 on every compare-and-swap
 *
 * Creating it twice is harmless (IF NOT EXISTS). MySQL has no `CREATE INDEX IF NOT EXISTS`, so its
 * index is declared inside the CREATE TABLE.
 */

export const TABLE = 'reliability_locks';

export function migrationStatements(dialect: SqlDialect): string[] {
  switch (dialect) {
    case 'sqlite':
      return [
        `CREATE TABLE IF NOT EXISTS ${TABLE} (
          key_hash TEXT NOT NULL PRIMARY KEY,
          kind TEXT NOT NULL,
          owner_hash TEXT NULL,
          fencing INTEGER NOT NULL DEFAULT 0,
          expires_at INTEGER NOT NULL DEFAULT 0,
          record TEXT NULL,
          revision INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID`,
        `CREATE INDEX IF NOT EXISTS ${TABLE}_expires_at ON ${TABLE} (expires_at)`,
      ];
    case 'postgres':
      return [
        `CREATE TABLE IF NOT EXISTS ${TABLE} (
          key_hash VARCHAR(64) NOT NULL PRIMARY KEY,
          kind VARCHAR(6) NOT NULL,
          owner_hash VARCHAR(64) NULL,
          fencing BIGINT NOT NULL DEFAULT 0,
          expires_at BIGINT NOT NULL DEFAULT 0,
          record TEXT NULL,
          revision BIGINT NOT NULL DEFAULT 0
        )`,
        `CREATE INDEX IF NOT EXISTS ${TABLE}_expires_at ON ${TABLE} (expires_at)`,
      ];
    case 'mysql':
      // ascii_bin: digests compare byte for byte, not case-insensitively.
      return [
        `CREATE TABLE IF NOT EXISTS ${TABLE} (
          key_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
          kind VARCHAR(6) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
          owner_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
          fencing BIGINT NOT NULL DEFAULT 0,
          expires_at BIGINT NOT NULL DEFAULT 0,
          record MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
          revision BIGINT NOT NULL DEFAULT 0,
          PRIMARY KEY (key_hash),
          INDEX ${TABLE}_expires_at (expires_at)
        ) ENGINE=InnoDB`,
      ];
  }
}

/** Fails on a table of the same name but another shape (e.g. another application's). */
const SHAPE_CHECK = `SELECT key_hash, kind, owner_hash, fencing, expires_at, record, revision FROM ${TABLE} WHERE 1 = 0`;

/** Creates the table and its index when missing, then checks that the table has Lockstep's shape. */
export async function migrate(backend: SqlBackend, isMissingColumn: (error: unknown) => boolean): Promise<void> {
  await backend.schemaChange(async session => {
    for (const statement of migrationStatements(backend.dialect)) await session.run(statement, []);
  });
  try {
    await backend.session(session => session.rows(SHAPE_CHECK, []));
  } catch (error) {
    if (!isMissingColumn(error)) throw error;
    throw new LockConfigurationError(
      `A ${TABLE} table with another shape already exists in this database (perhaps another application's). Give Lockstep its own database or schema in LOCKSTEP_DATABASE_URL.`,
      { setting: 'databaseUrl' },
    );
  }
}
