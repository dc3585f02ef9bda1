import { LockBackendError, LockConfigurationError, LockError } from '../../errors';
import type { SqlDialect } from './databaseUrl';

/**
 * Turns what mysql2, pg, better-sqlite3 and node:sqlite throw into Lockstep's typed errors, once,
 * by error code (never by the text of our own messages). Messages name the server by dialect, host
 * and port only; the raw error is kept as `cause` with the URL's user and password scrubbed out.
 */

export type SqlFailure = 'missing-table' | 'contention' | 'refused-credentials' | 'unreachable' | 'cannot-open' | 'other';

interface DriverErrorFields {
  code?: unknown;
  errno?: unknown;
  errcode?: unknown;
  sqlState?: unknown;
  message?: unknown;
  fatal?: unknown;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ECONNABORTED',
  'EADDRNOTAVAIL',
  // mysql2
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'PROTOCOL_ENQUEUE_AFTER_QUIT',
  'ER_SERVER_SHUTDOWN',
  'ER_CON_COUNT_ERROR',
  'ER_TOO_MANY_USER_CONNECTIONS',
]);

function fields(error: unknown): DriverErrorFields {
  return typeof error === 'object' && error !== null ? (error as DriverErrorFields) : {};
}

/** What kind of failure a client library reported. */
export function classify(dialect: SqlDialect, error: unknown): SqlFailure {
  const e = fields(error);
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (dialect === 'postgres') {
    if (code === '42P01' || code === '42703') return 'missing-table';
    if (code === '40001' || code === '40P01' || code === '55P03') return 'contention';
    if (code === '28P01' || code === '28000' || code === '3D000') return 'refused-credentials';
    // Class 08 (connection exception), 57P0x (shutdown, cannot connect now), 53300 (too many connections).
    if (/^08|^57P0|^53300$/.test(code)) return 'unreachable';
    if (code === '57014') return 'unreachable'; // statement/lock timeout: the server did not answer in time
    if (NETWORK_CODES.has(code)) return 'unreachable';
    // pg reports a lost socket, a refused pool slot and its own timeouts without a code.
    if (
      /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection ended|not queryable/i.test(
        message,
      )
    ) {
      return 'unreachable';
    }
    return 'other';
  }
  if (dialect === 'mysql') {
    const errno = typeof e.errno === 'number' ? e.errno : 0;
    if (errno === 1146 || errno === 1054) return 'missing-table';
    if (errno === 1213 || errno === 1205) return 'contention';
    if (errno === 1045 || errno === 1044 || errno === 1049 || errno === 1698) return 'refused-credentials';
    if (NETWORK_CODES.has(code) || e.fatal === true) return 'unreachable';
    return 'other';
  }
  // SQLite: better-sqlite3 sets `code` to the SQLite code name; node:sqlite sets `errcode` (number).
  const errcode = typeof e.errcode === 'number' ? e.errcode & 0xff : -1;
  if (/no such table|no such column/i.test(message)) return 'missing-table';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || errcode === 5 || errcode === 6) return 'contention';
  if (
    code.startsWith('SQLITE_CANTOPEN') ||
    code.startsWith('SQLITE_READONLY') ||
    code.startsWith('SQLITE_PERM') ||
    code.startsWith('SQLITE_NOTADB') ||
    code.startsWith('SQLITE_IOERR') ||
    code.startsWith('SQLITE_FULL') ||
    [14, 8, 3, 26, 10, 13].includes(errcode) ||
    /directory does not exist/i.test(message)
  )
    return 'cannot-open';
  return 'other';
}

/** A copy of `error` safe to keep as a cause: same code, message with `secrets` replaced. */
export function scrubbed(error: unknown, secrets: readonly string[]): Error {
  const e = fields(error);
  let message = typeof e.message === 'string' ? e.message : String(error);
  for (const secret of secrets) if (secret !== '') message = message.split(secret).join('***');
  const copy = new Error(message) as Error & { code?: unknown; errno?: unknown };
  copy.name = error instanceof Error ? error.name : 'Error';
  if (e.code !== undefined) copy.code = e.code;
  if (e.errno !== undefined) copy.errno = e.errno;
  return copy;
}

function evidence(error: unknown): string {
  const e = fields(error);
  const code = typeof e.code === 'string' && e.code !== '' ? e.code : typeof e.errcode === 'number' ? `SQLite ${e.errcode}` : '';
  return code === '' ? '' : ` (${code})`;
}

export const MIGRATE_HINT = 'run `lockstep migrate` (or `await manager.migrate()`) once against this database, then try again';

/**
 * The typed error for a failure of `what` (a short phrase: "claim a lease") against `where`
 * (from `describeTarget`). Lockstep's own errors pass through unchanged.
 */
export function translate(dialect: SqlDialect, error: unknown, what: string, where: string, secrets: readonly string[]): LockError {
  if (error instanceof LockError) return error;
  const cause = scrubbed(error, secrets);
  switch (classify(dialect, error)) {
    case 'missing-table':
      return new LockBackendError('sql', `The reliability_locks table is missing or has an older shape in ${where}: ${MIGRATE_HINT}.`, {
        cause,
        retryable: false,
      });
    case 'contention':
      return new LockBackendError(
        'sql',
        `Could not ${what}: ${where} stayed busy with other lock operations past the command timeout${evidence(error)}. Try again.`,
        { cause },
      );
    case 'refused-credentials':
      return new LockBackendError(
        'sql',
        `Could not ${what}: ${where} refused the credentials or does not have the database${evidence(error)}; check LOCKSTEP_DATABASE_URL or the databaseUrl setting.`,
        { cause, retryable: false },
      );
    case 'unreachable':
      return new LockBackendError(
        'sql',
        `Could not ${what}: ${where} is unreachable or did not answer in time${evidence(error)}. Check that it is running and reachable, then try again.`,
        { cause },
      );
    case 'cannot-open':
      return new LockBackendError(
        'sql',
        `Could not ${what}: ${where} cannot be opened or written${evidence(error)}; check that its folder exists and is writable by this user.`,
        { cause, retryable: false },
      );
    case 'other':
      return new LockBackendError('sql', `Could not ${what}: ${where} failed the operation${evidence(error)}.`, { cause });
  }
}

/** The SQLite library could not be loaded at all (some editor hosts ship neither). */
export function sqliteUnavailable(causes: readonly unknown[]): LockConfigurationError {
  return new LockConfigurationError(
    'SQLite is not available in this Node host: node:sqlite needs Node 22.5 or later and better-sqlite3 could not be loaded. Use PostgreSQL or MySQL (LOCKSTEP_DATABASE_URL), or the file driver.',
    {
      setting: 'driver',
      cause: new AggregateError(
        causes.map(c => scrubbed(c, [])),
        'no SQLite library loaded',
      ),
    },
  );
}
