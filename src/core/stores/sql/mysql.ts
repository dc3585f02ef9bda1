import type { Pool, PoolConnection, ResultSetHeader } from 'mysql2/promise';
import type { ServerTarget } from './databaseUrl';
import { describeTarget, secretsOf } from './databaseUrl';
import type { ServerOptions, SqlBackend, SqlRow, SqlSession } from './sqlBackend';

/**
 * MySQL and MariaDB through `mysql2/promise`. A small pool, created on first use (creating a
 * manager opens nothing). Sessions run READ COMMITTED so that a locking read of a missing row takes
 * no gap lock: two first claims of one key then meet at the primary key instead of deadlocking.
 */

const POOL_SIZE = 4;
const ER_DUP_ENTRY = 1062;

class MysqlBackend implements SqlBackend {
  readonly dialect = 'mysql' as const;
  readonly distributed = true;
  readonly where: string;
  readonly secrets: readonly string[];

  constructor(
    private readonly pool: Pool,
    target: ServerTarget,
    private readonly options: ServerOptions,
  ) {
    this.where = describeTarget(target);
    this.secrets = secretsOf(target);
  }

  session<T>(work: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.withConnection(connection => work(this.sessionOn(connection)));
  }

  transaction<T>(work: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.withConnection(async connection => {
      const session = this.sessionOn(connection);
      await this.query(connection, 'START TRANSACTION');
      try {
        const result = await work(session);
        await this.query(connection, 'COMMIT');
        return result;
      } catch (error) {
        await this.query(connection, 'ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  schemaChange(work: (session: SqlSession) => Promise<void>): Promise<void> {
    // DDL commits implicitly in MySQL; CREATE TABLE IF NOT EXISTS is safe to run concurrently.
    return this.session(work);
  }

  async settings(): Promise<Readonly<Record<string, string>>> {
    return { isolation: 'READ COMMITTED' };
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }

  /** A pooled connection for `work`; destroyed instead of reused after a connection-level failure. */
  private async withConnection<T>(work: (connection: PoolConnection) => Promise<T>): Promise<T> {
    const connection = await this.pool.getConnection();
    try {
      const result = await work(connection);
      connection.release();
      return result;
    } catch (error) {
      const e = error as { fatal?: unknown; code?: unknown };
      // After a client-side timeout the server may still answer later; never reuse that connection.
      if (e.fatal === true || e.code === 'PROTOCOL_SEQUENCE_TIMEOUT') connection.destroy();
      else connection.release();
      throw error;
    }
  }

  private query(connection: PoolConnection, sql: string, values: readonly unknown[] = []) {
    return connection.query({ sql, values: values as unknown[], timeout: this.options.commandTimeoutMs });
  }

  private sessionOn(connection: PoolConnection): SqlSession {
    return {
      rows: async (sql, params) => {
        const [rows] = await this.query(connection, sql, params);
        return rows as SqlRow[];
      },
      run: async (sql, params) => {
        try {
          const [result] = await this.query(connection, sql, params);
          // The client sets CLIENT_FOUND_ROWS, so this counts matched rows, as the other dialects do.
          return (result as ResultSetHeader).affectedRows;
        } catch (error) {
          if ((error as { errno?: unknown }).errno === ER_DUP_ENTRY) return 0;
          throw error;
        }
      },
    };
  }
}

export async function openMysqlBackend(target: ServerTarget, options: ServerOptions): Promise<SqlBackend> {
  const mysql = await import('mysql2/promise');
  const createPool = mysql.createPool ?? (mysql as unknown as { default: typeof mysql }).default.createPool;
  const ssl = target.params.get('ssl');
  const pool = createPool({
    host: target.host,
    port: target.port,
    user: target.user === '' ? undefined : target.user,
    password: target.password === '' ? undefined : target.password,
    database: target.database,
    connectTimeout: options.connectTimeoutMs,
    connectionLimit: POOL_SIZE,
    maxIdle: POOL_SIZE,
    idleTimeout: 30_000,
    enableKeepAlive: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    charset: 'utf8mb4',
    ...(ssl === 'true' || ssl === '1' ? { ssl: { rejectUnauthorized: true } } : {}),
  });
  const lockWaitSeconds = Math.max(1, Math.ceil(options.commandTimeoutMs / 1000));
  // The core pool's event hands over the callback-style connection.
  pool.pool.on('connection', connection => {
    // A socket error of an idle connection must not become an unhandled 'error' event.
    connection.on('error', () => undefined);
    // Queued before any statement of ours on this connection.
    connection.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED', () => undefined);
    connection.query(`SET SESSION innodb_lock_wait_timeout = ${lockWaitSeconds}`, () => undefined);
  });
  return new MysqlBackend(pool, target, options);
}
