import { createHash } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import type { Clock } from '../../clock';
import { DEFAULT_COMMAND_TIMEOUT_MS, type ResolvedConfig } from '../../config';
import { LockConfigurationError } from '../../errors';
import { packedJson } from '../packedPage';
import type { CasMeta, CasResult, ClaimResult, Driver, ReleaseResult, VersionedRecord, Watch, WatchOptions } from '../store';
import { recordChannel } from './changeFeed';
import { parseDatabaseUrl } from './databaseUrl';
import { migrate } from './migration';
import { RecordWatches } from './recordWatch';
import { leaseRow, parseRevision, recordRow } from './rows';
import type { SqlBackend } from './sqlBackend';
import { classify, translate } from './sqlErrors';
import { openSqliteBackend, sqliteBackendFor, type SqliteConnection } from './sqlite';
import { statementsFor, type Statements } from './statements';

/**
 * The `sql` driver (docs/leases.md#drivers) over SQLite, MySQL/MariaDB or PostgreSQL (one table,
 * `reliability_locks`, see `migration.ts`).
 *
 * - Claim: one transaction — a locking read of the key's row, then the unique insert of a first
 *   lease, or the conditional update of a free or expired one, which issues fencing + 1.
 * - Release: the conditional owner "delete" clears owner and expiry but keeps the row, so the
 *   fencing counter survives release and re-acquire (deleting the row would restart it at 1).
 * - Extend: a conditional update of this owner's live lease.
 * - Container records: compare-and-swap on `revision`; the unique insert for a first write;
 *   on PostgreSQL the write also sends NOTIFY in its own statement and `watch` LISTENs, with a slow
 *   backup poll; MySQL/MariaDB and SQLite `watch` polls (recordWatch.ts).
 *
 * Expiry compares `expires_at` with `now` from the application clock, not the database clock
 * (docs/leases.md#drivers): processes sharing a database must keep their clocks synchronised (NTP); a node
 * whose clock runs ahead sees leases expire early, one that runs behind sees them late.
 * A damaged row raises LockStorageError and is never read as free.
 */
export class SqlDriver implements Driver {
  readonly name = 'sql' as const;
  readonly distributed: boolean;
  private readonly sql: Statements;
  private readonly watches: RecordWatches;
  private closed = false;
  /** Private, so that printing the driver never shows the pool's credentials. */
  readonly #backend: SqlBackend;

  /** `options`: the watches' clock and jitter (tests drive them through simulated time). */
  constructor(backend: SqlBackend, options: { clock?: Clock; random?: () => number } = {}) {
    this.#backend = backend;
    this.distributed = backend.distributed;
    this.sql = statementsFor(backend.dialect);
    const feed = backend.changeFeed?.();
    this.watches = new RecordWatches(async key => (await this.read(key))?.revision ?? null, { ...(feed ? { feed } : {}), ...options });
  }

  /** The dialect in use: `sqlite`, `mysql` (also MariaDB) or `postgres`. */
  get dialect(): SqlBackend['dialect'] {
    return this.#backend.dialect;
  }

  async claim(key: string, ownerHash: string, ttlMs: number, now: number): Promise<ClaimResult> {
    const expiresAt = now + ttlMs;
    try {
      return await this.#backend.transaction(async session => {
        const [found] = await session.rows(this.sql.lockLease, [key]);
        if (found === undefined) {
          // Inserted 0 rows: a concurrent first claim of this key won.
          const inserted = await session.run(this.sql.insertLease, [key, ownerHash, expiresAt]);
          return inserted === 1 ? { claimed: true, fencingToken: 1, expiresAt } : { claimed: false };
        }
        const row = leaseRow(found);
        if (row.owner !== null && row.expiresAt > now) return { claimed: false };
        const taken = await session.run(this.sql.claimFree, [ownerHash, expiresAt, key, row.fencing, now]);
        return taken === 1 ? { claimed: true, fencingToken: row.fencing + 1, expiresAt } : { claimed: false };
      });
    } catch (error) {
      // A deadlock or busy database rolled the claim back: nothing was taken; the wait loop retries.
      if (classify(this.#backend.dialect, error) === 'contention') return { claimed: false };
      throw this.fail(error, 'claim a lease');
    }
  }

  async extend(key: string, ownerHash: string, ttlMs: number, now: number): Promise<boolean> {
    try {
      const extended = await this.#backend.session(s => s.run(this.sql.extend, [now + ttlMs, key, ownerHash, now]));
      if (extended === 1) return true;
      // Not ours or not live; only make sure that the row is not damaged.
      const [found] = await this.#backend.session(s => s.rows(this.sql.readLease, [key]));
      if (found !== undefined) leaseRow(found);
      return false;
    } catch (error) {
      throw this.fail(error, 'extend a lease');
    }
  }

  async release(key: string, ownerHash: string, now: number): Promise<ReleaseResult> {
    try {
      const released = await this.#backend.session(s => s.run(this.sql.releaseLive, [key, ownerHash, now]));
      if (released === 1) return 'released';
      // Rare path: say exactly what was there, under the row lock.
      return await this.#backend.transaction(async session => {
        const [found] = await session.rows(this.sql.lockLease, [key]);
        if (found === undefined) return 'absent';
        const row = leaseRow(found);
        if (row.owner === null) return 'absent';
        if (row.owner !== ownerHash) return row.expiresAt > now ? 'other-owner' : 'absent';
        await session.run(this.sql.clearOwner, [key, ownerHash]);
        return row.expiresAt > now ? 'released' : 'expired';
      });
    } catch (error) {
      throw this.fail(error, 'release a lease');
    }
  }

  async read(key: string): Promise<VersionedRecord | null> {
    try {
      const [found] = await this.#backend.session(s => s.rows(this.sql.readRecord, [recordRowKey(key)]));
      return found === undefined ? null : recordRow(found);
    } catch (error) {
      throw this.fail(error, 'read a record');
    }
  }

  async compareAndSwap(key: string, expectedRevision: string | null, next: unknown, _meta: CasMeta): Promise<CasResult> {
    const text = packedJson(next, 'sql');
    if (typeof text !== 'string') throw new LockConfigurationError('A record must be a JSON value.', { setting: 'record' });
    try {
      let written: CasResult = { ok: false };
      // PostgreSQL: the same write, announcing itself on the record's channel (statements.ts `notifying`).
      const notifying = this.sql.notifying;
      const channel = notifying ? [recordChannel(key)] : [];
      if (expectedRevision === null) {
        const insert = notifying?.insertRecord ?? this.sql.insertRecord;
        const inserted = await this.#backend.session(s => s.run(insert, [recordRowKey(key), text, ...channel]));
        if (inserted === 1) written = { ok: true, revision: '1' };
      } else {
        // A revision this driver never issued cannot match.
        const revision = parseRevision(expectedRevision);
        const update = notifying?.updateRecord ?? this.sql.updateRecord;
        if (
          revision !== undefined &&
          (await this.#backend.session(s => s.run(update, [text, recordRowKey(key), revision, ...channel]))) === 1
        ) {
          written = { ok: true, revision: String(revision + 1) };
        }
      }
      if (written.ok) this.watches.changed(key, written.revision);
      return written;
    } catch (error) {
      throw this.fail(error, 'write a record');
    }
  }

  /**
   * Calls `onChange` after the record may have changed: at once for writes through this driver and,
   * on PostgreSQL, for every write (NOTIFY; a lost one within 36 s); elsewhere within 1 s while
   * `options.interest` says the window holds or waits, within 36 s otherwise (recordWatch.ts).
   */
  watch(key: string, onChange: () => void, options?: WatchOptions): Watch {
    return this.watches.watch(key, onChange, options);
  }

  /** Creates `reliability_locks` and its index when missing; harmless to run again. */
  async migrate(): Promise<void> {
    try {
      await migrate(this.#backend, error => classify(this.#backend.dialect, error) === 'missing-table');
    } catch (error) {
      throw this.fail(error, 'migrate the lock table');
    }
  }

  /** Settings worth reporting next to benchmark figures (SQLite: journal mode, synchronous). */
  settings(): Promise<Readonly<Record<string, string>>> {
    return this.#backend.settings();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watches.close();
    await this.#backend.close();
  }

  private fail(error: unknown, what: string) {
    return translate(this.#backend.dialect, error, what, this.#backend.where, this.#backend.secrets);
  }
}

/** A record's row key: its own digest, so that a lease and a record of one key never share a row. */
export function recordRowKey(key: string): string {
  return createHash('sha256').update('lockstep-record\0').update(key).digest('hex');
}

/**
 * Opens the driver `config` names: SQLite for a `sqlite://` URL or no URL, else MySQL/MariaDB or
 * PostgreSQL. Loads client libraries and creates a pool, but connects only on the first operation.
 */
export async function openSqlDriver(config: ResolvedConfig): Promise<SqlDriver> {
  const target = parseDatabaseUrl(config.databaseUrl, config.path);
  if (target.dialect === 'sqlite') {
    if (config.requireDistributed) {
      throw new LockConfigurationError(
        'requireDistributed is set, but SQLite coordinates only the processes of one machine; give a MySQL/MariaDB or PostgreSQL URL in LOCKSTEP_DATABASE_URL.',
        { setting: 'requireDistributed' },
      );
    }
    try {
      return new SqlDriver(await openSqliteBackend(target, { busyTimeoutMs: config.commandTimeoutMs }));
    } catch (error) {
      throw translate('sqlite', error, 'open the lock database', 'the SQLite database file', []);
    }
  }
  // docs/leases.md#drivers: one stable namespace, chosen on purpose, shared by every deployment.
  if (!config.prefixExplicit) {
    throw new LockConfigurationError(
      'A shared database needs an explicit, stable prefix used by every deployment meant to coordinate; set LOCKSTEP_PREFIX or the prefix setting.',
      { setting: 'prefix' },
    );
  }
  const options = { connectTimeoutMs: config.connectTimeoutMs, commandTimeoutMs: config.commandTimeoutMs };
  const library = target.dialect === 'mysql' ? 'mysql2' : 'pg';
  try {
    const backend =
      target.dialect === 'mysql'
        ? await (await import('./mysql')).openMysqlBackend(target, options)
        : await (await import('./postgres')).openPostgresBackend(target, options);
    return new SqlDriver(backend);
  } catch (error) {
    throw new LockConfigurationError(`The ${library} client library could not be loaded; reinstall Lockstep's dependencies.`, {
      setting: 'driver',
      cause: error,
    });
  }
}

/**
 * A driver over a SQLite connection the caller opened (node:sqlite `DatabaseSync` or a
 * better-sqlite3 `Database`) on a shared file. Refuses to work while that connection is inside a
 * transaction of the caller's. The caller closes the connection.
 */
export function createSqliteDriver(
  connection: SqliteConnection | BetterSqlite3.Database,
  options: { busyTimeoutMs?: number } = {},
): SqlDriver {
  return new SqlDriver(
    sqliteBackendFor(connection as SqliteConnection, { busyTimeoutMs: options.busyTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS }),
  );
}
