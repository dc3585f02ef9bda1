/**
 * The live SQL test target, as `scripts/suites/sql.sh` hands it over: one dialect per mocha run,
 * its database in LOCKSTEP_DATABASE_URL (a fresh `lockstep_test_*` database, or a SQLite file in a
 * throwaway folder), LOCKSTEP_TEST_SQL_DIALECT and LOCKSTEP_TEST_SQL_STATE (server control).
 * Tests read these once here and never let LOCKSTEP_* leak into managers (they pass `env: {}`).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { resolveConfig, type LockManagerOptions } from '../../../src/core/config';
import { parseDatabaseUrl, type ServerTarget } from '../../../src/core/stores/sql/databaseUrl';
import { placeholders, type SqlValue } from '../../../src/core/stores/sql/sqlBackend';
import { openSqlDriver, type SqlDriver } from '../../../src/core/stores/sql/sqlDriver';
import { childEnv, REPO_ROOT } from '../../helpers/children';
import { inCi } from '../../helpers/ci';

export type LiveDialect = 'sqlite' | 'mariadb' | 'postgres';

export const liveUrl = process.env.LOCKSTEP_DATABASE_URL;
export const liveDialect = process.env.LOCKSTEP_TEST_SQL_DIALECT as LiveDialect | undefined;
const stateDir = process.env.LOCKSTEP_TEST_SQL_STATE;

/**
 * Whether this run registers the tests that need no server (credentials.test.ts, sqlite.test.ts: their own loopback
 * ports and files): in the SQLite run of scripts/suites/sql.sh, and in a run with no live target at all (mocha on the
 * files directly), where they used to register zero tests. The MariaDB and PostgreSQL runs leave them out, so they
 * count once.
 */
export const runsServerlessTests = liveDialect === undefined || liveDialect === 'sqlite';

/**
 * Call in a `before` hook. Without a target: in CI a failure, elsewhere a loud skip (the suite
 * script is what provides the target: `bash scripts/suites/sql.sh`).
 */
export function requireLiveTarget(context: Mocha.Context): { url: string; dialect: LiveDialect } {
  if (liveUrl && liveDialect) return { url: liveUrl, dialect: liveDialect };
  if (inCi()) {
    throw new Error(
      'No live SQL target (LOCKSTEP_DATABASE_URL, LOCKSTEP_TEST_SQL_DIALECT); run these tests through scripts/suites/sql.sh.',
    );
  }
  process.stderr.write('\n!!!!!!!! SKIPPED: live SQL tests need scripts/suites/sql.sh (no LOCKSTEP_DATABASE_URL) !!!!!!!!\n\n');
  context.skip();
}

/** A fresh namespace per test file, so that runs never see each other's keys. */
export function randomPrefix(): string {
  return `sqltest-${randomBytes(6).toString('hex')}`;
}

/** Manager/driver options on the live target; the environment never leaks in. */
export function liveOptions(url: string, prefix: string, extra: LockManagerOptions = {}): LockManagerOptions {
  return { driver: 'sql', databaseUrl: url, prefix, connectTimeoutMs: 2_000, commandTimeoutMs: 5_000, ...extra };
}

export function openLiveDriver(url: string, prefix: string, extra: LockManagerOptions = {}): Promise<SqlDriver> {
  return openSqlDriver(resolveConfig(liveOptions(url, prefix, extra), {}));
}

/**
 * Runs one statement on the live database with the dialect's own client library, outside Lockstep
 * (to inspect rows, or to damage one on purpose). `?` placeholders in every dialect.
 */
export async function adminQuery(url: string, sql: string, params: readonly SqlValue[] = []): Promise<Record<string, unknown>[]> {
  const target = parseDatabaseUrl(url, '/unused');
  if (target.dialect === 'sqlite') {
    const db = new Database(target.file);
    try {
      const statement = db.prepare(sql);
      if (statement.reader) return statement.all(...params) as Record<string, unknown>[];
      statement.run(...params);
      return [];
    } finally {
      db.close();
    }
  }
  if (target.dialect === 'mysql') {
    const mysql = await import('mysql2/promise');
    const connection = await mysql.createConnection(mysqlOptions(target));
    try {
      const [rows] = await connection.query(sql, params as unknown[]);
      return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
    } finally {
      await connection.end();
    }
  }
  const pg = await import('pg');
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  try {
    return (await client.query(placeholders('postgres', sql), params as unknown[])).rows;
  } finally {
    await client.end();
  }
}

function mysqlOptions(target: ServerTarget) {
  return {
    host: target.host,
    port: target.port,
    user: target.user,
    password: target.password,
    database: target.database,
    supportBigNumbers: true,
    bigNumberStrings: true,
  };
}

/** Stops or starts the live server through the suite script (which knows its data directory). */
export async function controlServer(dialect: 'mariadb' | 'postgres', action: 'stop' | 'start'): Promise<void> {
  if (!stateDir) throw new Error('LOCKSTEP_TEST_SQL_STATE is not set; run through scripts/suites/sql.sh');
  await promisify(execFile)('bash', [path.join(REPO_ROOT, 'scripts/suites/sql.sh'), 'server', dialect, action], {
    env: { ...process.env, LOCKSTEP_TEST_SQL_STATE: stateDir },
    timeout: 90_000,
  });
}

/**
 * A child's environment (no LOCKSTEP_* of ours leaks in) with tsx's ESM hooks added: under
 * `-r tsx/cjs` alone, core's lazy `import()` of a driver module does not resolve `.ts` files
 * (ERR_MODULE_NOT_FOUND); the bundled CLI has no such problem.
 */
export function tsChildEnv(extra: Record<string, string>, preload: readonly string[] = []): NodeJS.ProcessEnv {
  const env = childEnv(extra);
  env.NODE_OPTIONS = [env.NODE_OPTIONS, ...preload.map(p => `--require ${p}`), '--import tsx'].filter(Boolean).join(' ');
  return env;
}
