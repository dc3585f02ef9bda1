import * as path from 'node:path';
import { hasDosDrivePrefix, pathOfFileUrl } from '../../fileUrl';
import { LockConfigurationError } from '../../errors';

/**
 * Reads `LOCKSTEP_DATABASE_URL` / the `databaseUrl` setting into what a dialect needs to connect.
 * Nothing here connects. No message ever repeats the URL: it may carry a password.
 */

export type SqlDialect = 'sqlite' | 'mysql' | 'postgres';

export interface SqliteTarget {
  readonly dialect: 'sqlite';
  /** Absolute path of the shared database file. */
  readonly file: string;
  /** True when the file is the default `<path>/lockstep.sqlite` (its folder may be created). */
  readonly isDefault: boolean;
}

export interface ServerTarget {
  readonly dialect: 'mysql' | 'postgres';
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly database: string;
  /** Query parameters of the URL (e.g. `sslmode`), decoded. */
  readonly params: ReadonlyMap<string, string>;
  /** The URL with a normalised scheme, for client libraries that parse it themselves. Never print it. */
  readonly url: string;
}

export type SqlTarget = SqliteTarget | ServerTarget;

const SETTING = 'databaseUrl';
const WHERE = 'check LOCKSTEP_DATABASE_URL or the databaseUrl setting';
export const DEFAULT_SQLITE_FILE = 'lockstep.sqlite';

/**
 * `url` undefined or empty: SQLite in the storage folder, as the file driver would use it. A SQLite
 * URL's path is read as `platform` reads a file URL (fileUrl.ts): `sqlite:///C:/data/locks.db` is
 * `C:\data\locks.db` on Windows.
 */
export function parseDatabaseUrl(url: string | undefined, storePath: string, platform: NodeJS.Platform = process.platform): SqlTarget {
  if (url === undefined || url.trim() === '') {
    return { dialect: 'sqlite', file: path.join(storePath, DEFAULT_SQLITE_FILE), isDefault: true };
  }
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    // Deliberately without the cause: Node's URL error carries the whole input, password included.
    throw new LockConfigurationError(
      `The database URL is not a valid URL; ${WHERE} (e.g. postgres://user@host:5432/db or sqlite:///abs/path.db).`,
      { setting: SETTING },
    );
  }
  switch (parsed.protocol) {
    case 'sqlite:':
      return sqliteTarget(parsed, platform);
    case 'mysql:':
    case 'mariadb:':
      return serverTarget(parsed, 'mysql', 3306);
    case 'postgres:':
    case 'postgresql:':
      return serverTarget(parsed, 'postgres', 5432);
    default:
      throw new LockConfigurationError(`The database URL scheme must be sqlite, mysql, mariadb, postgres or postgresql; ${WHERE}.`, {
        setting: SETTING,
      });
  }
}

function sqliteTarget(url: URL, platform: NodeJS.Platform): SqliteTarget {
  if (url.host !== '' || url.username !== '' || url.password !== '') {
    throw new LockConfigurationError(
      `A SQLite URL names a local file with three slashes and an absolute path, e.g. sqlite:///var/lib/app/locks.db; ${WHERE}.`,
      { setting: SETTING },
    );
  }
  const file = pathOfFileUrl(`file://${url.pathname}`, platform) ?? decodeURIComponent(url.pathname);
  const mode = url.searchParams.get('mode');
  // `:memory:` (and in-memory URIs) would give every process its own private database.
  if (file.includes(':memory:') || mode === 'memory' || file === '' || file === '/') {
    throw new LockConfigurationError(
      `SQLite coordination needs a shared database file, never :memory:; give an absolute file path; ${WHERE}.`,
      { setting: SETTING },
    );
  }
  if (!isFullPath(file, platform)) {
    throw new LockConfigurationError(`The SQLite file path must be absolute; ${WHERE}.`, { setting: SETTING });
  }
  return { dialect: 'sqlite', file: (platform === 'win32' ? path.win32 : path.posix).normalize(file), isDefault: false };
}

function serverTarget(url: URL, dialect: 'mysql' | 'postgres', defaultPort: number): ServerTarget {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (host === '') {
    throw new LockConfigurationError(`The database URL names no host; ${WHERE}.`, { setting: SETTING });
  }
  if (database === '' || database.includes('/')) {
    throw new LockConfigurationError(`The database URL must name one database after the host, e.g. …:${defaultPort}/lockstep; ${WHERE}.`, {
      setting: SETTING,
    });
  }
  const port = url.port === '' ? defaultPort : Number(url.port);
  const params = new Map<string, string>();
  for (const [key, value] of url.searchParams) params.set(key, value);
  const normalised = new URL(url.href);
  return {
    dialect,
    host,
    port,
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database,
    params,
    url: dialect === 'postgres' ? normalised.href.replace(/^postgresql:/, 'postgres:') : normalised.href,
  };
}

/** How messages name the backend: dialect, host and port, never the user, password or URL. */
export function describeTarget(target: SqlTarget): string {
  if (target.dialect === 'sqlite') return 'the SQLite database file';
  const name = target.dialect === 'mysql' ? 'MySQL/MariaDB' : 'PostgreSQL';
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  return `the ${name} server at ${host}:${target.port}`;
}

/** Strings that must never reach a message, a log or a cause: the URL's credentials. */
export function secretsOf(target: SqlTarget): string[] {
  if (target.dialect === 'sqlite') return [];
  return [target.password, target.user, encodeURIComponent(target.password), encodeURIComponent(target.user)].filter(s => s.length >= 1);
}

/** Absolute on `platform`; on Windows with a drive or a UNC share too (a path rooted on "the current drive" moves with the process). */
function isFullPath(file: string, platform: NodeJS.Platform): boolean {
  if (platform !== 'win32') return path.posix.isAbsolute(file);
  return (hasDosDrivePrefix(file) && path.win32.isAbsolute(file)) || file.startsWith('\\\\');
}
