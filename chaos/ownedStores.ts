/**
 * The chaos harness runs only against stores it owns (issue 15, bad input): before a run it checks that the
 * store it was pointed at holds nothing (a folder with no entry, a Redis database with no key, a database
 * without the `reliability_locks` table) and refuses otherwise; after the run it removes only what it made.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Redis from 'ioredis';
import { TABLE } from '../src/core/stores/sql/migration';

/**
 * Removes a folder the harness made. A SIGKILLed worker's git children outlive it for a moment and may still be
 * writing objects into it (fs.rmSync's own retries re-try only the last rmdir, not the entries created since), so
 * the whole removal is tried again until it succeeds or 30 s pass; then it says what it left, and never throws:
 * a run's verdict is not lost to its clean-up.
 */
export function removeMade(target: string): void {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      fs.rmSync(target, { recursive: true, force: true });
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        console.error(`chaos: could not remove ${target} (${(error as NodeJS.ErrnoException).code}); remove it by hand`);
        return;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200); // a synchronous pause: the callers are in finally blocks
    }
  }
}

/** The harness refused a store: it holds something the harness did not create. Never names a credential. */
export class ForeignStoreError extends Error {}

export interface Owned {
  /** Removes what the harness made there, and nothing else. */
  release(): Promise<void>;
}

/** A folder for the file or SQLite store: new, or existing and empty. */
export function claimFolder(dir: string): Owned {
  const existed = fs.existsSync(dir);
  if (existed) {
    const entries = fs.readdirSync(dir);
    if (entries.length > 0)
      throw new ForeignStoreError(
        `${dir} already holds ${entries.length} entries the chaos harness did not create; point --path at a new or empty folder.`,
      );
  } else fs.mkdirSync(dir, { recursive: true });
  return {
    async release() {
      if (!existed) {
        removeMade(dir);
        return;
      }
      // It was empty: everything in it now is the harness's.
      for (const entry of fs.readdirSync(dir)) removeMade(path.join(dir, entry));
    },
  };
}

function where(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.hostname}:${u.port}${u.pathname}`;
  } catch {
    return 'the given URL';
  }
}

/** A Redis database with no key at all; afterwards only the keys of the run's prefix go. */
export async function claimRedis(url: string, prefix: string): Promise<Owned> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  try {
    await client.connect();
    const keys = await client.dbsize();
    if (keys > 0)
      throw new ForeignStoreError(
        `The Redis database at ${where(url)} already holds ${keys} keys the chaos harness did not create; point --redis-url at an empty database.`,
      );
  } finally {
    client.disconnect();
  }
  return {
    async release() {
      const c = new Redis(url, { maxRetriesPerRequest: 3 });
      try {
        let cursor = '0';
        do {
          const [next, keys] = await c.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
          if (keys.length > 0) await c.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      } finally {
        c.disconnect();
      }
    },
  };
}

/** A MariaDB/MySQL or PostgreSQL database without the lock table; the harness creates it and drops it after. */
export async function claimSqlDatabase(url: string): Promise<Owned> {
  const sql = await sqlAdmin(url);
  try {
    if (await sql.tableExists())
      throw new ForeignStoreError(
        `The database at ${where(url)} already has a ${TABLE} table the chaos harness did not create; point --database-url at an empty database.`,
      );
  } finally {
    await sql.close();
  }
  return {
    async release() {
      const s = await sqlAdmin(url);
      try {
        await s.query(`DROP TABLE IF EXISTS ${TABLE}`);
      } finally {
        await s.close();
      }
    },
  };
}

export interface SqlAdmin {
  tableExists(): Promise<boolean>;
  /** Kills one random other connection to this database from the server side; false when there was none. */
  killOneConnection(): Promise<boolean>;
  query(text: string): Promise<unknown>;
  close(): Promise<void>;
}

/** A plain connection of the harness's own (not through Lockstep), for checks, clean-up and faults. */
export async function sqlAdmin(url: string): Promise<SqlAdmin> {
  const scheme = new URL(url).protocol.replace(':', '');
  if (scheme === 'postgres' || scheme === 'postgresql') {
    const { Client } = await import('pg');
    const client = new Client({ connectionString: url });
    client.on('error', () => {
      /* reported by the next query */
    });
    await client.connect();
    return {
      async tableExists() {
        return (await client.query(`SELECT to_regclass('${TABLE}') IS NOT NULL AS present`)).rows[0].present === true;
      },
      async killOneConnection() {
        const { rows } = await client.query(
          'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        );
        if (rows.length === 0) return false;
        await client.query('SELECT pg_terminate_backend($1)', [rows[Math.floor(Math.random() * rows.length)].pid]);
        return true;
      },
      query: text => client.query(text),
      close: () => client.end(),
    };
  }
  if (scheme === 'mysql' || scheme === 'mariadb') {
    const mysql = await import('mysql2/promise');
    const u = new URL(url);
    const conn = await mysql.createConnection({
      host: u.hostname,
      port: Number(u.port || 3306),
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      database: u.pathname.slice(1),
    });
    conn.on('error', () => {
      /* reported by the next query */
    });
    return {
      async tableExists() {
        const [rows] = await conn.query(
          'SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?',
          [TABLE],
        );
        return Number((rows as { n: number }[])[0].n) > 0;
      },
      async killOneConnection() {
        const [rows] = await conn.query('SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND id <> CONNECTION_ID()');
        const ids = (rows as { id: number }[]).map(r => r.id);
        if (ids.length === 0) return false;
        try {
          await conn.query(`KILL CONNECTION ${Number(ids[Math.floor(Math.random() * ids.length)])}`);
        } catch {
          return false;
        } // it may have ended meanwhile
        return true;
      },
      query: text => conn.query(text),
      close: () => conn.end(),
    };
  }
  throw new ForeignStoreError('--database-url must be a mariadb://, mysql:// or postgres:// URL.');
}
