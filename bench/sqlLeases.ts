/**
 * The sql driver's acquire + release per dialect, against the floor measured the same way, in ONE run:
 *
 *  - lockstep: the public API (`createLockManager` → `acquire` → `release`) on one name, sequential.
 *    Per acquire+release: a claim transaction (BEGIN, locking read, conditional UPDATE, COMMIT) and
 *    the release's conditional owner UPDATE (the row stays: it keeps the fencing counter).
 *  - floor: the same client library on its own table, nothing else: a bare transaction with one
 *    insert-or-conditional-update (PostgreSQL/SQLite `INSERT … ON CONFLICT DO UPDATE … WHERE`,
 *    MySQL `INSERT … ON DUPLICATE KEY UPDATE` with IF()) and COMMIT, then a conditional DELETE.
 *
 * SQLite runs always, on a temporary file, both sides with WAL and the same `synchronous` level
 * (read back and printed). MariaDB/MySQL and PostgreSQL run when their URL is given:
 *
 *   bash scripts/suites/sql.sh bench          (starts throwaway servers, runs this, cleans up)
 *   LOCKSTEP_BENCH_MYSQL_URL=mysql://… LOCKSTEP_BENCH_POSTGRES_URL=postgres://… node --import tsx bench/sqlLeases.ts
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { createLockManager } from '../src/core/leases';
import { parseDatabaseUrl, type ServerTarget } from '../src/core/stores/sql/databaseUrl';
import { openSqlDriver } from '../src/core/stores/sql/sqlDriver';
import { resolveConfig } from '../src/core/config';
import { SQLITE_SYNCHRONOUS } from '../src/core/stores/sql/sqlite';
import { adminQuery } from '../test/live/sql/sqlLive';
import { fmt, summaryRow, times } from './summary';

const OPS = Number(process.env.BENCH_SQL_OPS ?? 500);
const WARMUP = 50;
const TTL_MS = 30_000;
const FLOOR_TABLE = 'lockstep_bench_floor';
const KEY = 'f'.repeat(64);

interface Side {
  op(i: number): Promise<void>;
  close(): Promise<void>;
}
interface Stats {
  opsPerSecond: number;
  meanUs: number;
  p50Us: number;
  p99Us: number;
}

async function measure(side: Side): Promise<Stats> {
  try {
    for (let i = 0; i < WARMUP; i++) await side.op(i);
    const latencies: number[] = [];
    const start = performance.now();
    for (let i = 0; i < OPS; i++) {
      const t = performance.now();
      await side.op(i);
      latencies.push((performance.now() - t) * 1000);
    }
    const seconds = (performance.now() - start) / 1000;
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
    return { opsPerSecond: OPS / seconds, meanUs: (seconds * 1e6) / OPS, p50Us: at(0.5), p99Us: at(0.99) };
  } finally {
    await side.close();
  }
}

async function lockstepSide(url: string): Promise<Side> {
  const manager = createLockManager({ driver: 'sql', databaseUrl: url, prefix: 'bench', env: {} });
  await manager.migrate();
  return {
    async op() {
      const handle = await manager.acquire('bench-name', { ttl: TTL_MS / 1000 });
      if (!handle.acquired) throw new Error('lockstep: not acquired');
      if (!(await handle.release())) throw new Error('lockstep: release returned false');
    },
    close: () => manager.close(),
  };
}

/** An owner hash per operation, as Lockstep makes one per acquisition. */
const owner = (i: number) => i.toString(16).padStart(64, '0');

function sqliteFloor(file: string): Side {
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${SQLITE_SYNCHRONOUS}`);
  db.exec(
    `CREATE TABLE IF NOT EXISTS ${FLOOR_TABLE} (key_hash TEXT PRIMARY KEY, owner_hash TEXT, expires_at INTEGER NOT NULL, fencing INTEGER NOT NULL) WITHOUT ROWID`,
  );
  const claim = db.prepare(`INSERT INTO ${FLOOR_TABLE} (key_hash, owner_hash, expires_at, fencing) VALUES (?, ?, ?, 1)
    ON CONFLICT (key_hash) DO UPDATE SET owner_hash = excluded.owner_hash, expires_at = excluded.expires_at, fencing = fencing + 1
    WHERE owner_hash IS NULL OR expires_at <= ?`);
  const release = db.prepare(`DELETE FROM ${FLOOR_TABLE} WHERE key_hash = ? AND owner_hash = ?`);
  return {
    async op(i) {
      const now = Date.now();
      db.exec('BEGIN IMMEDIATE');
      try {
        if (claim.run(KEY, owner(i), now + TTL_MS, now).changes !== 1) throw new Error('floor: not claimed');
        db.exec('COMMIT');
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
      if (release.run(KEY, owner(i)).changes !== 1) throw new Error('floor: not released');
    },
    close: async () => {
      db.exec(`DROP TABLE ${FLOOR_TABLE}`);
      db.close();
    },
  };
}

async function postgresFloor(target: ServerTarget): Promise<Side> {
  const pg = await import('pg');
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${FLOOR_TABLE} (key_hash VARCHAR(64) PRIMARY KEY, owner_hash VARCHAR(64), expires_at BIGINT NOT NULL, fencing BIGINT NOT NULL)`,
  );
  const claim = `INSERT INTO ${FLOOR_TABLE} AS t (key_hash, owner_hash, expires_at, fencing) VALUES ($1, $2, $3, 1)
    ON CONFLICT (key_hash) DO UPDATE SET owner_hash = excluded.owner_hash, expires_at = excluded.expires_at, fencing = t.fencing + 1
    WHERE t.owner_hash IS NULL OR t.expires_at <= $4`;
  return {
    async op(i) {
      const now = Date.now();
      await client.query('BEGIN');
      try {
        if ((await client.query(claim, [KEY, owner(i), now + TTL_MS, now])).rowCount !== 1) throw new Error('floor: not claimed');
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
      if ((await client.query(`DELETE FROM ${FLOOR_TABLE} WHERE key_hash = $1 AND owner_hash = $2`, [KEY, owner(i)])).rowCount !== 1)
        throw new Error('floor: not released');
    },
    close: async () => {
      await client.query(`DROP TABLE ${FLOOR_TABLE}`);
      await client.end();
    },
  };
}

async function mysqlFloor(target: ServerTarget): Promise<Side> {
  const mysql = await import('mysql2/promise');
  const connection = await mysql.createConnection({
    host: target.host,
    port: target.port,
    user: target.user,
    password: target.password,
    database: target.database,
  });
  await connection.query(
    `CREATE TABLE IF NOT EXISTS ${FLOOR_TABLE} (key_hash CHAR(64) CHARACTER SET ascii PRIMARY KEY, owner_hash CHAR(64) CHARACTER SET ascii, expires_at BIGINT NOT NULL, fencing BIGINT NOT NULL) ENGINE=InnoDB`,
  );
  // @free is computed once from the old row, before any column is overwritten (MySQL assigns left to right).
  const claim = `INSERT INTO ${FLOOR_TABLE} (key_hash, owner_hash, expires_at, fencing) VALUES (?, ?, ?, 1)
    ON DUPLICATE KEY UPDATE fencing = IF(@free := (owner_hash IS NULL OR expires_at <= ?), fencing + 1, fencing),
      expires_at = IF(@free, VALUES(expires_at), expires_at), owner_hash = IF(@free, VALUES(owner_hash), owner_hash)`;
  return {
    async op(i) {
      const now = Date.now();
      await connection.query('START TRANSACTION');
      try {
        const [result] = await connection.query(claim, [KEY, owner(i), now + TTL_MS, now]);
        if ((result as { affectedRows: number }).affectedRows < 1) throw new Error('floor: not claimed');
        await connection.query('COMMIT');
      } catch (error) {
        await connection.query('ROLLBACK');
        throw error;
      }
      const [deleted] = await connection.query(`DELETE FROM ${FLOOR_TABLE} WHERE key_hash = ? AND owner_hash = ?`, [KEY, owner(i)]);
      if ((deleted as { affectedRows: number }).affectedRows !== 1) throw new Error('floor: not released');
    },
    close: async () => {
      await connection.query(`DROP TABLE ${FLOOR_TABLE}`);
      await connection.end();
    },
  };
}

async function serverVersion(url: string, target: ServerTarget): Promise<string> {
  if (target.dialect === 'postgres') return `PostgreSQL ${(await adminQuery(url, 'SHOW server_version'))[0]!.server_version}`;
  return `MySQL/MariaDB ${(await adminQuery(url, 'SELECT VERSION() AS v'))[0]!.v}`;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-bench-sql-'));
  const rows: string[] = [];
  const notes: string[] = [];
  /** The run-wide summary's figures per dialect (bench/summary.ts): measured, or why not. */
  const summary: { label: string; lockstep?: Stats; floor?: Stats; skipped?: string }[] = [];
  let sqliteModes = '';
  try {
    const sqliteFile = path.join(dir, 'locks.db');
    const dialects: { label: string; env?: string; url: string | undefined; floor: (url: string) => Promise<Side> }[] = [
      { label: 'SQLite', url: `sqlite://${sqliteFile}`, floor: async () => sqliteFloor(path.join(dir, 'floor.db')) },
      {
        label: 'MariaDB',
        env: 'LOCKSTEP_BENCH_MYSQL_URL',
        url: process.env.LOCKSTEP_BENCH_MYSQL_URL || undefined,
        floor: url => mysqlFloor(parseDatabaseUrl(url, dir) as ServerTarget),
      },
      {
        label: 'PostgreSQL',
        env: 'LOCKSTEP_BENCH_POSTGRES_URL',
        url: process.env.LOCKSTEP_BENCH_POSTGRES_URL || undefined,
        floor: url => postgresFloor(parseDatabaseUrl(url, dir) as ServerTarget),
      },
    ];
    for (const { label, env, url, floor } of dialects) {
      if (!url) {
        notes.push(`${label}: not run (no URL; use \`bash scripts/suites/sql.sh bench\`)`);
        summary.push({ label, skipped: `no server: ${env} unset; \`scripts/suites/sql.sh bench\` starts one` });
        continue;
      }
      const lockstep = await measure(await lockstepSide(url));
      const bare = await measure(await floor(url));
      summary.push({ label, lockstep, floor: bare });
      rows.push(
        `| ${label.padEnd(10)} | ${fmt(lockstep.opsPerSecond).padStart(7)} | ${fmt(lockstep.p50Us).padStart(7)} | ${fmt(lockstep.p99Us).padStart(7)} | ${fmt(bare.opsPerSecond).padStart(7)} | ${fmt(bare.p50Us).padStart(7)} | ${fmt(bare.p99Us).padStart(7)} | ${fmt(lockstep.meanUs / bare.meanUs, 2).padStart(5)}× |`,
      );
      const target = parseDatabaseUrl(url, dir);
      if (target.dialect === 'sqlite') {
        const driver = await openSqlDriver(resolveConfig({ driver: 'sql', databaseUrl: url }, {}));
        const s = await driver.settings();
        await driver.close();
        sqliteModes = `SQLite in ${s.journal_mode === 'wal' ? 'WAL' : `journal_mode=${s.journal_mode}`} with \`synchronous=${s.synchronous}\` on both sides`;
        notes.push(
          `SQLite: journal_mode=${s.journal_mode}, synchronous=${s.synchronous} (both sides), busy_timeout=${s.busy_timeout_ms} ms, on ${os.tmpdir()}`,
        );
      } else {
        notes.push(`${label}: ${await serverVersion(url, target)} on loopback, READ COMMITTED, server defaults (durable commits)`);
      }
    }
    console.log(
      `sql leases — Node ${process.version}, ${os.cpus().length} CPUs, ${os.platform()} ${os.release()}; ${OPS} sequential acquire+release after ${WARMUP} warm-up, one name`,
    );
    console.log('');
    console.log('| dialect    | lockstep ops/s | p50 µs | p99 µs | floor ops/s | p50 µs | p99 µs | time ratio |');
    console.log('|------------|--------:|--------:|--------:|--------:|--------:|--------:|------:|');
    for (const row of rows) console.log(row);
    console.log('');
    for (const note of notes) console.log(note);
    summaryRow({
      bench: 'sqlLeases',
      what: 'acquire+release against a bare transaction floor',
      lockstep: summary
        .map(d =>
          d.skipped
            ? `${d.label} SKIPPED (${d.skipped})`
            : `${d.label} ${fmt(d.lockstep!.opsPerSecond)} ops/s, p50 ${fmt(d.lockstep!.p50Us)} µs: **${times(d.lockstep!.meanUs / d.floor!.meanUs)}** the floor's time`,
        )
        .join('; '),
      baseline: `the floor (BEGIN, one insert-or-conditional-update, COMMIT; a conditional DELETE; same client library, own table): ${summary
        .filter(d => !d.skipped)
        .map(d => `${d.label} ${fmt(d.floor!.opsPerSecond)} ops/s, p50 ${fmt(d.floor!.p50Us)} µs`)
        .join('; ')}; ${sqliteModes}`,
      target: '—',
    });
    console.log(
      'lockstep per op: BEGIN, SELECT … FOR UPDATE (SQLite: BEGIN IMMEDIATE), conditional UPDATE, COMMIT; release: one conditional UPDATE.',
    );
    console.log(
      'floor per op: BEGIN, one insert-or-conditional-update, COMMIT; release: one conditional DELETE. Same client library, own table.',
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch(error => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
