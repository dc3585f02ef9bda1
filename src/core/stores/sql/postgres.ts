import type { Client, Pool, PoolClient } from 'pg';
import type { ChangeFeed } from './changeFeed';
import type { ServerTarget } from './databaseUrl';
import { describeTarget, secretsOf } from './databaseUrl';
import { PgChangeFeed } from './pgChangeFeed';
import type { ServerOptions, SqlBackend, SqlRow, SqlSession } from './sqlBackend';

/**
 * PostgreSQL through `pg`. A small pool, created on first use (creating a manager opens nothing).
 * Server-side statement and lock timeouts bound every command; the client-side query timeout
 * covers a server that stopped answering altogether.
 */

const POOL_SIZE = 4;
/** Serialises concurrent migrations: CREATE TABLE IF NOT EXISTS alone can race in PostgreSQL. */
const MIGRATION_LOCK = 0x6c6f636b; // 'lock'

class PostgresBackend implements SqlBackend {
  readonly dialect = 'postgres' as const;
  readonly distributed = true;
  readonly where: string;
  readonly secrets: readonly string[];
  private feed: PgChangeFeed | undefined;

  constructor(
    private readonly pool: Pool,
    target: ServerTarget,
    private readonly listenConnection: () => Promise<Client>,
  ) {
    this.where = describeTarget(target);
    this.secrets = secretsOf(target);
  }

  changeFeed(): ChangeFeed {
    this.feed ??= new PgChangeFeed(this.listenConnection);
    return this.feed;
  }

  session<T>(work: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.withClient(client => work(sessionOn(client)));
  }

  transaction<T>(work: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.withClient(async client => {
      await client.query('BEGIN');
      try {
        const result = await work(sessionOn(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  schemaChange(work: (session: SqlSession) => Promise<void>): Promise<void> {
    return this.transaction(async session => {
      await session.rows(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`, []);
      await work(session);
    });
  }

  async settings(): Promise<Readonly<Record<string, string>>> {
    return { isolation: 'READ COMMITTED' };
  }

  async close(): Promise<void> {
    await this.feed?.close();
    await this.pool.end().catch(() => undefined);
  }

  /** A pooled client for `work`; discarded instead of reused after a connection-level failure. */
  private async withClient<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      const result = await work(client);
      client.release();
      return result;
    } catch (error) {
      // A server error has a SQLSTATE (five characters); anything else is the connection's fault.
      const sqlState = (error as { code?: unknown }).code;
      const serverError = typeof sqlState === 'string' && /^[0-9A-Z]{5}$/.test(sqlState) && !/^(08|57P)/.test(sqlState);
      client.release(serverError ? undefined : true);
      throw error;
    }
  }
}

function sessionOn(client: PoolClient): SqlSession {
  return {
    rows: async (sql, params) => (await client.query(sql, params as unknown[])).rows as SqlRow[],
    run: async (sql, params) => (await client.query(sql, params as unknown[])).rowCount ?? 0,
  };
}

export async function openPostgresBackend(target: ServerTarget, options: ServerOptions): Promise<SqlBackend> {
  const pg = await import('pg');
  const library = pg.Pool ? pg : (pg as unknown as { default: typeof pg }).default;
  const PoolClass = library.Pool;
  const pool = new PoolClass({
    connectionString: target.url,
    max: POOL_SIZE,
    connectionTimeoutMillis: options.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    allowExitOnIdle: true,
    keepAlive: true,
    application_name: 'lockstep',
    query_timeout: options.commandTimeoutMs,
    statement_timeout: options.commandTimeoutMs,
    lock_timeout: options.commandTimeoutMs,
    // A process that dies inside a claim cannot keep the row locked for long.
    idle_in_transaction_session_timeout: Math.max(options.commandTimeoutMs * 2, 10_000),
  });
  // Errors of idle or checked-out clients (server stopped, socket reset) reach the waiting query;
  // these listeners only keep them from becoming unhandled 'error' events.
  pool.on('error', () => undefined);
  pool.on('connect', client => {
    client.on('error', () => undefined);
  });
  // The LISTEN connection (pgChangeFeed.ts): its own client, named apart from the pool's in pg_stat_activity.
  const listenConnection = async (): Promise<Client> => {
    const client = new library.Client({
      connectionString: target.url,
      connectionTimeoutMillis: options.connectTimeoutMs,
      keepAlive: true,
      application_name: 'lockstep-listen',
      query_timeout: options.commandTimeoutMs,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return client;
  };
  return new PostgresBackend(pool, target, listenConnection);
}
