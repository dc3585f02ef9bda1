import * as fs from 'node:fs';
import * as path from 'node:path';
import { LockConfigurationError } from '../../errors';
import type { SqliteTarget } from './databaseUrl';
import type { SqlBackend, SqlRow, SqlSession, SqlValue } from './sqlBackend';
import { sqliteUnavailable } from './sqlErrors';

/**
 * SQLite on a shared database file, through `node:sqlite` where the host has it (Node 22.5+) or
 * `better-sqlite3` (loaded lazily; it is native and kept outside the bundle). Both are synchronous:
 * every operation is one short transaction (BEGIN IMMEDIATE for writes) and this process runs them
 * one at a time, so a statement of one operation never lands inside another's transaction.
 */

/** The part of both libraries' connection and statement objects that Lockstep uses. */
export interface SqliteStatement {
  run(...params: SqlValue[]): { changes: number | bigint };
  get(...params: SqlValue[]): unknown;
}
export interface SqliteConnection {
  exec(sql: string): void;
  prepare(sql: string): SqliteStatement;
  close(): void;
  /** better-sqlite3 */
  readonly inTransaction?: boolean;
  /** node:sqlite (Node 22.16+) */
  readonly isTransaction?: boolean;
  /** better-sqlite3: true for an in-memory database. */
  readonly memory?: boolean;
  /** node:sqlite (Node 24+): the file, null for an in-memory database. */
  location?(): string | null;
}

export interface SqliteOptions {
  /** Busy timeout set on first use, bounded to 60 s. */
  readonly busyTimeoutMs: number;
}

export const MAX_BUSY_TIMEOUT_MS = 60_000;
/**
 * FULL, not NORMAL: with NORMAL a power loss may forget the last commits, and with them fencing
 * tokens already handed out — the counter would then issue a token twice.
 */
export const SQLITE_SYNCHRONOUS = 'FULL';

type Opener = (file: string) => SqliteConnection;

/** node:sqlite if the host has it, else better-sqlite3; a configuration error when neither loads. */
export async function loadSqlite(): Promise<{ library: string; open: Opener }> {
  const causes: unknown[] = [];
  try {
    const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
    const builtin = getBuiltin?.('node:sqlite') as { DatabaseSync?: new (file: string) => SqliteConnection } | undefined;
    const DatabaseSync = builtin?.DatabaseSync;
    if (DatabaseSync) return { library: 'node:sqlite', open: file => new DatabaseSync(file) };
  } catch (error) {
    causes.push(error);
  }
  try {
    const mod = await import('better-sqlite3');
    const Database =
      (mod as unknown as { default?: typeof import('better-sqlite3') }).default ?? (mod as unknown as typeof import('better-sqlite3'));
    return { library: 'better-sqlite3', open: file => new Database(file) as unknown as SqliteConnection };
  } catch (error) {
    causes.push(error);
  }
  throw sqliteUnavailable(causes);
}

class SqliteBackend implements SqlBackend {
  readonly dialect = 'sqlite' as const;
  readonly distributed = false;
  readonly where = 'the SQLite database file';
  readonly secrets: readonly string[] = [];
  private readonly statements = new Map<string, SqliteStatement>();
  private queue: Promise<unknown> = Promise.resolve();
  private prepared = false;
  private closed = false;

  constructor(
    private readonly db: SqliteConnection,
    private readonly options: SqliteOptions,
    /** Only for files Lockstep opened itself: WAL is a persistent property of the file. */
    private readonly setWal: boolean,
    /** False for an injected connection: its owner closes it. */
    private readonly ownsConnection: boolean,
  ) {}

  session<T>(work: (session: SqlSession) => Promise<T>): Promise<T> {
    // Even a lone read runs in a (deferred) transaction: BEGIN fails inside a caller's transaction.
    return this.exclusive(() => this.inTransaction('BEGIN', work));
  }

  transaction<T>(work: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.exclusive(() => this.inTransaction('BEGIN IMMEDIATE', work));
  }

  schemaChange(work: (session: SqlSession) => Promise<void>): Promise<void> {
    return this.transaction(work);
  }

  settings(): Promise<Readonly<Record<string, string>>> {
    return this.exclusive(async () => {
      const journal = this.db.prepare('PRAGMA journal_mode').get() as { journal_mode?: unknown } | undefined;
      const sync = this.db.prepare('PRAGMA synchronous').get() as { synchronous?: unknown } | undefined;
      const busy = this.db.prepare('PRAGMA busy_timeout').get() as Record<string, unknown> | undefined;
      const levels = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];
      return {
        journal_mode: String(journal?.journal_mode ?? 'unknown'),
        synchronous: levels[Number(sync?.synchronous)] ?? String(sync?.synchronous),
        busy_timeout_ms: String(Object.values(busy ?? {})[0]),
      };
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.catch(() => undefined);
    if (this.ownsConnection) this.db.close();
  }

  /** One operation at a time on this connection, in call order. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.closed) throw new LockConfigurationError('This SQLite lock store is closed; create a new lock manager.');
      this.prepareOnce();
      return work();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async inTransaction<T>(begin: string, work: (session: SqlSession) => Promise<T>): Promise<T> {
    if (this.db.inTransaction === true || this.db.isTransaction === true) throw callerTransaction();
    try {
      this.db.exec(begin);
    } catch (error) {
      if (/within a transaction/i.test(String((error as { message?: unknown }).message))) throw callerTransaction();
      throw error;
    }
    try {
      const result = await work(this.sessionApi);
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      try {
        this.db.exec('ROLLBACK');
      } catch {
        /* already rolled back by SQLite (e.g. SQLITE_FULL) */
      }
      throw error;
    }
  }

  /** First use: the bounded busy timeout (docs/leases.md#bounds), WAL and the synchronous level. */
  private prepareOnce(): void {
    if (this.prepared) return;
    const busy = Math.max(1, Math.min(Math.round(this.options.busyTimeoutMs), MAX_BUSY_TIMEOUT_MS));
    this.db.exec(`PRAGMA busy_timeout = ${busy}`);
    if (this.setWal) this.db.prepare('PRAGMA journal_mode = WAL').get();
    this.db.exec(`PRAGMA synchronous = ${SQLITE_SYNCHRONOUS}`);
    this.prepared = true;
  }

  private statement(sql: string): SqliteStatement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private readonly sessionApi: SqlSession = {
    rows: async (sql, params) => {
      // Only single-row lookups by primary key, plus the migration's shape check (no rows).
      const row = this.statement(sql).get(...params) as SqlRow | undefined | null;
      return row === undefined || row === null ? [] : [row];
    },
    run: async (sql, params) => Number(this.statement(sql).run(...params).changes),
  };
}

function callerTransaction(): LockConfigurationError {
  return new LockConfigurationError(
    'The SQLite connection given to Lockstep is inside a transaction; an uncommitted lease would be invisible to other processes. Give Lockstep its own connection, or commit first.',
    { setting: 'connection' },
  );
}

/** Opens (creating when missing) the shared database file named by the URL or the default path. */
export async function openSqliteBackend(target: SqliteTarget, options: SqliteOptions): Promise<SqlBackend> {
  const { open } = await loadSqlite();
  if (target.isDefault) fs.mkdirSync(path.dirname(target.file), { recursive: true, mode: 0o700 });
  return new SqliteBackend(open(target.file), options, true, true);
}

/** Uses a connection the caller opened (node:sqlite DatabaseSync or better-sqlite3 Database). */
export function sqliteBackendFor(connection: SqliteConnection, options: SqliteOptions): SqlBackend {
  if (connection.memory === true || (typeof connection.location === 'function' && connection.location() === null)) {
    throw new LockConfigurationError('SQLite coordination needs a shared database file, never :memory:; open the connection on a file.', {
      setting: 'connection',
    });
  }
  return new SqliteBackend(connection, options, false, false);
}
