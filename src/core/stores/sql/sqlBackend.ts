import type { ChangeFeed } from './changeFeed';
import type { SqlDialect } from './databaseUrl';

/**
 * What the SQL driver needs from one dialect (SQLite, MySQL/MariaDB, PostgreSQL): sessions on one
 * connection, transactions, and the schema change. Dialect files implement it; `sqlDriver.ts` holds
 * all of the lease and record logic once. Backends throw the client library's raw errors;
 * the driver translates them (`sqlErrors.ts`).
 */

export type SqlValue = string | number | null;
export type SqlRow = Readonly<Record<string, unknown>>;

export interface SqlSession {
  /** The rows of a SELECT. */
  rows(sql: string, params: readonly SqlValue[]): Promise<SqlRow[]>;
  /**
   * The number of rows an INSERT/UPDATE/DELETE matched. An INSERT whose key already exists
   * counts 0 and does not fail (nor abort the surrounding transaction).
   */
  run(sql: string, params: readonly SqlValue[]): Promise<number>;
}

/** Connect and per-command timeouts of MySQL and PostgreSQL, from the configuration. */
export interface ServerOptions {
  readonly connectTimeoutMs: number;
  readonly commandTimeoutMs: number;
}

export interface SqlBackend {
  readonly dialect: SqlDialect;
  /** True for MySQL/MariaDB and PostgreSQL: processes on other machines can coordinate through it. */
  readonly distributed: boolean;
  /** How messages name the server (no credentials), e.g. "the PostgreSQL server at db:5432". */
  readonly where: string;
  /** The URL's user and password, scrubbed from any error kept as a cause. */
  readonly secrets: readonly string[];
  /** Statements outside a transaction: each commits by itself. */
  session<T>(work: (session: SqlSession) => Promise<T>): Promise<T>;
  /** A write transaction on one connection: commits when `work` resolves, rolls back when it throws. */
  transaction<T>(work: (session: SqlSession) => Promise<T>): Promise<T>;
  /** Runs the migration's statements, serialised against concurrent migrations where the dialect can. */
  schemaChange(work: (session: SqlSession) => Promise<void>): Promise<void>;
  /**
   * PostgreSQL: the LISTEN side of record change notifications (pgChangeFeed.ts), one per backend.
   * Absent where the dialect has no push (MySQL/MariaDB, SQLite): their watches poll.
   */
  changeFeed?(): ChangeFeed;
  /** Read-back of settings worth reporting (SQLite journal mode and synchronous level). */
  settings(): Promise<Readonly<Record<string, string>>>;
  close(): Promise<void>;
}

/** Positional placeholders: `?` for SQLite and MySQL, `$1, $2, …` for PostgreSQL. */
export function placeholders(dialect: SqlDialect, sql: string): string {
  if (dialect !== 'postgres') return sql;
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
