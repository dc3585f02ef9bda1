/**
 * The file and SQL lock pages after many acquire/petition/release cycles (issue 30: "History at 100,000
 * transitions (git driver; the file and SQL pages after the same number of acquire/petition/release
 * cycles): one transition, … a `status` … each ≤ 1.3× their cost at 100"). bench/historyScale.ts measures
 * the git driver; this measures the file driver, SQLite, and MariaDB and PostgreSQL when their servers are
 * given, each in ONE run at 100 cycles and at BENCH_PAGE_N (default 1,000: past the page's bound, see below):
 *
 *  - one transition       a third identity's `petition`, then its `withdraw` (each timed; the median of both)
 *  - a read as `status`   `container.read()` and `container.describe(record)` in a NEW Container (opened and
 *                         closed outside the timing: its driver connects at that first read, as a `lockstep
 *                         status` process's does), and beside it the same read again in that Container
 *  - the page's size      its JSON, its audit lines, the bytes the store holds for it (read back from the store:
 *                         the newest revision file, the SQL row's `record`), and the store's own size (the file
 *                         driver's folder; SQLite's database and its -wal; the server's table with its indexes)
 *
 * The page is made by real writes: a team from test/helpers/gitFixture.ts (a bare remote, clones, a committed
 * `.lockstep.json` from `lockstep init` on the driver), and in this process one Container per identity, each with
 * its own driver connection. A cycle is: the holder acquires, the other identity petitions, the holder releases
 * (its landing check asks the remote, as `lockstep release` does). The release hands the turn to the petitioner,
 * who is the next cycle's holder: the two take turns, each cycle writes three transitions, and after each cycle the
 * page is in the same state (released, one petitioner queued), so the cycle repeats forever. The medians of the
 * three writes over the 100 cycles before each point are printed too.
 *
 * The page keeps the newest MAX_AUDIT_LINES (500) transitions, so it grows until about 160 cycles and then stays its
 * size: when BENCH_PAGE_N is above 1,000 the page is measured at 1,000 cycles as well, and the table shows the ratio
 * from there (past the bound) beside the issue's ratio to 100. A cycle takes some 50–70 ms on a 2-core machine, most
 * of it the git processes of the acquire's and the release's landing checks: 1,000 cycles are about a minute a driver,
 * 10,000 are 8–11 minutes, and the issue's 100,000 would be 1–1.5 hours a driver (a run of 10,000 on every driver
 * found nothing that grows with the cycles past the page's bound but PostgreSQL's table on disk).
 *
 * PostgreSQL and MariaDB need their servers: `bash scripts/suites/sql.sh bench pageScale` starts throwaway ones
 * and runs this with LOCKSTEP_BENCH_POSTGRES_URL / LOCKSTEP_BENCH_MYSQL_URL; without them those drivers are
 * SKIPPED, loudly. A driver that fails is FAILED in the figures, and the bench exits 1.
 *
 *   npm run bench -- pageScale      (or: node --import tsx bench/pageScale.ts; BENCH_PAGE_N=100000 for the issue's size)
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Container } from '../src/core/container/container';
import { type LockRecord, MAX_AUDIT_LINES } from '../src/core/lockRecord';
import { PACK_ABOVE_BYTES } from '../src/core/stores/packedPage';
import { parseDatabaseUrl, type ServerTarget } from '../src/core/stores/sql/databaseUrl';
import { TABLE } from '../src/core/stores/sql/migration';
import { recordRowKey } from '../src/core/stores/sql/sqlDriver';
import { createGitFixture, type GitFixture } from '../test/helpers/gitFixture';
import { makeTempDir, removeTempDir } from '../test/helpers/tempDir';
import { adminQuery } from '../test/live/sql/sqlLive';
import { fmt, reasonOf, summaryRow, times, verdict } from './summary';

const SMALL = 100;
const BIG = Number(process.env.BENCH_PAGE_N ?? 1_000);
const OPS = 7;
const TARGET = 1.3;
/**
 * The cycles timed for the per-driver rate the report states (the first ones), and a point measured between SMALL and
 * BIG: past the audit's bound (MAX_AUDIT_LINES, reached after about 160 cycles), where the page has its lasting size.
 */
const RATE_CYCLES = 1_000;
const MID = RATE_CYCLES;
const POINTS = [SMALL, ...(BIG > MID ? [MID] : []), BIG];
/** Cycles that would take longer than this are said to be slow (they still run in full). */
const SLOW_MS = 10 * 60_000;

if (!Number.isSafeInteger(BIG) || BIG <= SMALL) {
  console.error(`BENCH_PAGE_N must be a whole number above ${SMALL}; it is ${process.env.BENCH_PAGE_N}`);
  process.exit(2);
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.floor((s.length - 1) / 2)]!;
};

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

/** What one point (after n cycles) measured. */
interface Point {
  readonly cycles: number;
  /** Medians of OPS, ms. */
  readonly petition: number;
  readonly withdraw: number;
  /** The median of the petitions and withdrawals together. */
  readonly transition: number;
  /** read + describe in a new Container (its driver connects at this read). */
  readonly read: number;
  /** The same again in that Container. */
  readonly readAgain: number;
  /** Medians of the holder's acquire, the petition and the holder's release over the SMALL cycles before this point, ms. */
  readonly cycleAcquire: number;
  readonly cyclePetition: number;
  readonly cycleRelease: number;
  /** The page: its JSON's bytes, its audit lines, and the bytes the store holds for it (read back). */
  readonly json: number;
  readonly auditLines: number;
  readonly stored: number;
  /** The store's own size, in words (the file driver's folder, SQLite's files, a server's table). */
  readonly store: string;
  /** The same as one number, bytes. */
  readonly storeBytes: number;
}

interface DriverRun {
  readonly label: string;
  /** At SMALL, MID (when BIG is larger) and BIG cycles. */
  readonly points?: Point[];
  /** Seconds: the first RATE_CYCLES cycles (or all, when fewer), and all BIG cycles. */
  readonly rate?: { cycles: number; seconds: number };
  readonly allCyclesSeconds?: number;
  readonly skipped?: string;
  readonly failed?: string;
}

/** How one driver's team is made, and how the bytes its store holds for the page are read back. */
interface DriverSetUp {
  readonly env: Record<string, string>;
  readonly initArgs?: string[];
  readonly beforeInit?: string[][];
  /** The stored page's bytes (read from the store itself), and the store's own size; `store`: the team's LOCKSTEP_PATH. */
  readonly storedBytes: (key: string, store: string) => Promise<number>;
  readonly storeSize: (store: string) => Promise<{ text: string; bytes: number }>;
  /** Removes what the bench left in a shared server (its page's row); closes connections. */
  readonly dispose: (key: string | undefined) => Promise<void>;
}

/** Every file (and symbolic link) below `dir`: how many, and their bytes (a link's: its target's length). */
function folderSize(dir: string): { entries: number; bytes: number } {
  let entries = 0;
  let bytes = 0;
  const visit = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) visit(full);
      else {
        entries++;
        bytes += fs.lstatSync(full).size;
      }
    }
  };
  visit(dir);
  return { entries, bytes };
}

/**
 * The file driver: the page is the newest revision file of its record folder (file.ts: `r<digest>/<16 digits>.json`,
 * a symbolic link whose target holds a small revision, a file for a larger one; lstat's size is either's bytes).
 */
function fileSetUp(): DriverSetUp {
  return {
    env: {},
    storedBytes: async (_key, store) => {
      const revisions: string[] = [];
      const visit = (at: string) => {
        for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
          const full = path.join(at, entry.name);
          if (entry.isDirectory()) visit(full);
          else if (/^\d{16}\.json$/.test(entry.name) && path.basename(at).startsWith('r')) revisions.push(full);
        }
      };
      visit(store);
      const newest = revisions.sort((a, b) => path.basename(a).localeCompare(path.basename(b))).at(-1);
      if (newest === undefined) throw new Error('no revision file of the record in the store');
      return fs.lstatSync(newest).size;
    },
    storeSize: async store => {
      const { entries, bytes } = folderSize(store);
      return { text: `${fmt(bytes)} bytes in ${entries} files`, bytes };
    },
    dispose: async () => undefined,
  };
}

function sqliteSetUp(dir: string): DriverSetUp {
  const file = path.join(dir, 'locks.db');
  const size = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
  return {
    env: { LOCKSTEP_DRIVER: 'sql', LOCKSTEP_DATABASE_URL: `sqlite://${file}` },
    initArgs: ['--driver', 'sql'],
    beforeInit: [['migrate']],
    storedBytes: async key => {
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        const row = db.prepare(`SELECT length(CAST(record AS BLOB)) AS n FROM ${TABLE} WHERE key_hash = ?`).get(recordRowKey(key)) as
          | { n: number }
          | undefined;
        if (row === undefined) throw new Error('no row of the record in the database');
        return row.n;
      } finally {
        db.close();
      }
    },
    storeSize: async () => {
      const db = size(file);
      const wal = size(`${file}-wal`);
      return { text: `db ${fmt(db)} + wal ${fmt(wal)} bytes`, bytes: db + wal };
    },
    dispose: async () => undefined,
  };
}

/** MariaDB or PostgreSQL: the row's `record` read back through the client library, and the row removed at the end. */
function serverSetUp(url: string, dir: string): DriverSetUp {
  const target = parseDatabaseUrl(url, dir) as ServerTarget;
  /** One statement's first row (`?` placeholders: test/live/sql/sqlLive.ts adminQuery), its values as numbers; undefined: no row. */
  const query = async (sql: string, parameters: string[] = []): Promise<Record<string, number> | undefined> => {
    const [row] = await adminQuery(url, sql, parameters);
    return row === undefined ? undefined : Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
  };
  return {
    env: { LOCKSTEP_DRIVER: 'sql', LOCKSTEP_DATABASE_URL: url, LOCKSTEP_PREFIX: `pagescale-${randomBytes(4).toString('hex')}` },
    initArgs: ['--driver', 'sql'],
    beforeInit: [['migrate']],
    storedBytes: async key => {
      const row = await query(`SELECT OCTET_LENGTH(record) AS n FROM ${TABLE} WHERE key_hash = ?`, [recordRowKey(key)]);
      if (row === undefined) throw new Error('no row of the record in the database');
      return row.n!;
    },
    // The table with its indexes (PostgreSQL: and its TOAST table, where a long `record` value is kept): old row versions
    // an update leaves behind count until autovacuum (PostgreSQL) or the purge (InnoDB) reuses their space. InnoDB's
    // figure is from its statistics, brought up to date first (ANALYZE TABLE).
    storeSize: async () => {
      if (target.dialect === 'mysql') await adminQuery(url, `ANALYZE TABLE ${TABLE}`);
      const row = await query(
        target.dialect === 'postgres'
          ? `SELECT pg_total_relation_size(c.oid) AS n, pg_total_relation_size(c.reltoastrelid) AS toast,
          (SELECT autovacuum_count FROM pg_stat_all_tables WHERE relid = c.reltoastrelid) AS vacuums
          FROM pg_class c WHERE c.oid = to_regclass('${TABLE}')`
          : `SELECT data_length + index_length AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '${TABLE}'`,
      );
      if (row === undefined) throw new Error(`no table ${TABLE}`);
      const how =
        target.dialect === 'postgres'
          ? `pg_total_relation_size; its TOAST ${fmt(row.toast!)}, autovacuumed ${fmt(row.vacuums!)} times`
          : "InnoDB's data_length + index_length";
      return { text: `table ${fmt(row.n!)} bytes (${how})`, bytes: row.n! };
    },
    dispose: async key => {
      if (key === undefined) return;
      await query(`DELETE FROM ${TABLE} WHERE key_hash = ? AND kind = 'record'`, [recordRowKey(key)]);
    },
  };
}

/** A team on one driver, its cycles run and its points measured. */
async function runDriver(label: string, set: DriverSetUp): Promise<DriverRun> {
  const team: GitFixture = await createGitFixture({
    members: ['alice', 'bob', 'carol'],
    operators: [],
    env: set.env,
    ...(set.initArgs ? { initArgs: set.initArgs } : {}),
    ...(set.beforeInit ? { beforeInit: set.beforeInit } : {}),
  });
  const env = { ...set.env, LOCKSTEP_PATH: team.store };
  const open = (dir: string) => Container.open({ cwd: dir, env });
  const opened: Container[] = [];
  let key: string | undefined;
  try {
    const [alice, bob, carol] = await Promise.all(['alice', 'bob', 'carol'].map(name => open(team.member(name).dir)));
    opened.push(alice!, bob!, carol!);
    key = carol!.key;
    const takers: [Container, Container] = [alice!, bob!];
    let done = 0;
    let cycleMs = 0;
    let rate: { cycles: number; seconds: number } | undefined;
    /** Runs cycles up to `to`; returns the medians of each write over its last SMALL cycles. */
    const cyclesTo = async (to: number) => {
      const tail: { acquire: number[]; petition: number[]; release: number[] } = { acquire: [], petition: [], release: [] };
      const keepFrom = to - SMALL;
      while (done < to) {
        // The holder is the one the last release handed the turn to (the queue's head); the other petitions.
        const holder = takers[done % 2]!;
        const other = takers[(done + 1) % 2]!;
        const t0 = performance.now();
        await holder.acquire();
        const t1 = performance.now();
        await other.petition();
        const t2 = performance.now();
        await holder.release();
        const t3 = performance.now();
        cycleMs += t3 - t0;
        if (done >= keepFrom) {
          tail.acquire.push(t1 - t0);
          tail.petition.push(t2 - t1);
          tail.release.push(t3 - t2);
        }
        done++;
        if (done === Math.min(RATE_CYCLES, BIG)) {
          rate = { cycles: done, seconds: cycleMs / 1000 };
          const projected = (cycleMs / done) * BIG;
          console.log(
            `  ${label}: the first ${fmt(done)} cycles in ${rate.seconds.toFixed(1)} s (${(cycleMs / done).toFixed(1)} ms a cycle of three writes)` +
              (BIG > done ? `; at this pace ${fmt(BIG)} cycles take about ${minutes(projected)}` : ''),
          );
          if (projected > SLOW_MS)
            console.log(
              `  ${label}: SLOW: ${fmt(BIG)} real cycles take more than ${minutes(SLOW_MS)} here (a cycle's acquire and release run git in the clone, as \`lockstep\` does); timed, and run in full`,
            );
        } else if (done % 10_000 === 0 && done < BIG) console.log(`  ${label}: ${fmt(done)} cycles after ${minutes(cycleMs)}`);
      }
      return { acquire: median(tail.acquire), petition: median(tail.petition), release: median(tail.release) };
    };
    const measure = async (cycle: { acquire: number; petition: number; release: number }): Promise<Point> => {
      const petitions: number[] = [];
      const withdrawals: number[] = [];
      const reads: number[] = [];
      const again: number[] = [];
      // One round more than measured: the first warms the code paths and the connections up.
      for (let i = 0; i <= OPS; i++) {
        const p = await timed(() => carol!.petition());
        const w = await timed(() => carol!.withdraw());
        const reader = await open(team.seed);
        let first: number;
        let second: number;
        try {
          first = await timed(async () => reader.describe((await reader.read()).record));
          second = await timed(async () => reader.describe((await reader.read()).record));
        } finally {
          await reader.close();
        }
        if (i === 0) continue;
        petitions.push(p);
        withdrawals.push(w);
        reads.push(first);
        again.push(second);
      }
      const { record } = await carol!.read();
      const page: LockRecord = record;
      const store = await set.storeSize(team.store);
      return {
        cycles: done,
        petition: median(petitions),
        withdraw: median(withdrawals),
        transition: median([...petitions, ...withdrawals]),
        read: median(reads),
        readAgain: median(again),
        cycleAcquire: cycle.acquire,
        cyclePetition: cycle.petition,
        cycleRelease: cycle.release,
        json: Buffer.byteLength(JSON.stringify(page)),
        auditLines: page.audit.length,
        stored: await set.storedBytes(carol!.key, team.store),
        store: store.text,
        storeBytes: store.bytes,
      };
    };
    const points: Point[] = [];
    for (const at of POINTS) {
      points.push(await measure(await cyclesTo(at)));
      console.log(`  ${label}: measured at ${fmt(at)} cycles (${minutes(cycleMs)} of cycles so far)`);
    }
    return { label, points, ...(rate ? { rate } : {}), allCyclesSeconds: cycleMs / 1000 };
  } finally {
    for (const c of opened) await c.close().catch(() => undefined);
    await set.dispose(key).catch(error => console.error(`  ${label}: could not remove the bench's row: ${reasonOf(error)}`));
    team.dispose();
  }
}

const ms = (x: number) => (Number.isNaN(x) ? 'FAILED' : `${x.toFixed(x >= 100 ? 0 : x >= 10 ? 1 : 2)} ms`);
const minutes = (x: number) => (x >= 120_000 ? `${(x / 60_000).toFixed(1)} min` : `${(x / 1000).toFixed(1)} s`);
type Timed = 'transition' | 'read';
const small = (run: DriverRun) => run.points![0]!;
const big = (run: DriverRun) => run.points!.at(-1)!;
/** The point past the audit's bound (MID cycles), when the run has one between SMALL and BIG. */
const mid = (run: DriverRun) => (run.points!.length === 3 ? run.points![1] : undefined);
const ratioOf = (run: DriverRun, k: Timed) => big(run)[k] / small(run)[k];

function printTable(run: DriverRun): void {
  const points = run.points!;
  const m = mid(run);
  console.log(`\n${run.label}: the page after ${points.map(p => fmt(p.cycles)).join(', ')} cycles (medians of ${OPS})`);
  console.log(
    `| operation | ${points.map(p => `at ${fmt(p.cycles)}`).join(' | ')} | ${fmt(BIG)} / ${SMALL} (target ≤ ${TARGET}×) |${m ? ` ${fmt(BIG)} / ${fmt(MID)} |` : ''}`,
  );
  console.log(`| --- |${points.map(() => ' ---: |').join('')} --- |${m ? ' --- |' : ''}`);
  const row = (what: string, pick: (p: Point) => number, text: (v: number) => string, target: boolean) => {
    const r = pick(big(run)) / pick(small(run));
    const mark = target ? (r <= TARGET ? ' met' : ' NOT met') : '';
    const steady = m ? ` ${times(pick(big(run)) / pick(m))} |` : '';
    console.log(`| ${what} | ${points.map(p => text(pick(p))).join(' | ')} | ${times(r)}${mark} |${steady}`);
  };
  row('one transition (a third identity: petition or withdraw)', p => p.transition, ms, true);
  row('  its petition', p => p.petition, ms, false);
  row('  its withdraw', p => p.withdraw, ms, false);
  row('a read as `status` does it (read + describe, new Container)', p => p.read, ms, true);
  row('  the same read again in that Container', p => p.readAgain, ms, false);
  row(`a cycle's acquire (median of the ${SMALL} cycles before)`, p => p.cycleAcquire, ms, false);
  row(`a cycle's petition (median of the ${SMALL} cycles before)`, p => p.cyclePetition, ms, false);
  row(`a cycle's release (median of the ${SMALL} cycles before)`, p => p.cycleRelease, ms, false);
  row('audit lines on the page', p => p.auditLines, fmt, false);
  row('the page as JSON (bytes)', p => p.json, fmt, false);
  const packed = (p: Point) => (p.json > PACK_ABOVE_BYTES ? 'packed' : 'plain JSON');
  console.log(
    `| the page as the store holds it (bytes, read back) | ${points.map(p => `${fmt(p.stored)} (${packed(p)})`).join(' | ')} | ${times(big(run).stored / small(run).stored)} |${m ? ` ${times(big(run).stored / m.stored)} |` : ''}`,
  );
  const storeRatio = (x: Point) => times(big(run).storeBytes / x.storeBytes);
  console.log(`| the store | ${points.map(p => p.store).join(' | ')} | ${storeRatio(small(run))} |${m ? ` ${storeRatio(m)} |` : ''}`);
  const bound = Math.ceil((MAX_AUDIT_LINES - (small(run).auditLines - 3 * SMALL)) / 3);
  console.log(
    `  the audit keeps the newest ${MAX_AUDIT_LINES} transitions (MAX_AUDIT_LINES): three a cycle, it is full after about ${bound} cycles and the page stops growing there`,
  );
  if (run.rate)
    console.log(
      `  cycles: the first ${fmt(run.rate.cycles)} in ${run.rate.seconds.toFixed(1)} s (${((run.rate.seconds * 1000) / run.rate.cycles).toFixed(1)} ms a cycle); ` +
        `all ${fmt(BIG)} in ${minutes(run.allCyclesSeconds! * 1000)}; 100,000 at that pace: about ${minutes((run.allCyclesSeconds! * 1000 * 100_000) / BIG)}`,
    );
}

function summarize(runs: readonly DriverRun[]): void {
  const measured = runs.filter(r => r.points);
  const skipped = runs.filter(r => r.skipped);
  const failed = runs.filter(r => r.failed);
  const ratio = (r: DriverRun, k: Timed) => {
    const x = ratioOf(r, k);
    return x > TARGET ? `**${times(x)}**` : times(x);
  };
  const steady = (r: DriverRun) => {
    const m = mid(r);
    return m
      ? `; from ${fmt(MID)} cycles (the audit at its ${MAX_AUDIT_LINES}-line bound) to ${fmt(BIG)}: one transition ${times(big(r).transition / m.transition)}, a read ${times(big(r).read / m.read)}`
      : '';
  };
  const lockstep = [
    ...measured.map(
      r =>
        `${r.label}: one transition ${ratio(r, 'transition')} (${ms(small(r).transition)} → ${ms(big(r).transition)}), ` +
        `a read ${ratio(r, 'read')} (${ms(small(r).read)} → ${ms(big(r).read)}), ` +
        `the page at ${fmt(BIG)}: ${fmt(big(r).stored)} bytes stored (${fmt(big(r).json)} bytes of JSON, ${fmt(big(r).auditLines)} audit lines)${steady(r)}`,
    ),
    ...skipped.map(r => `${r.label} SKIPPED (${r.skipped})`),
    ...failed.map(r => `${r.label} **FAILED** (${r.failed})`),
  ].join('; ');
  const over = measured.flatMap(r =>
    (['transition', 'read'] as const)
      .filter(k => !(ratioOf(r, k) <= TARGET))
      .map(k => `${r.label} ${k === 'transition' ? 'one transition' : 'the read'} ${times(ratioOf(r, k))}`),
  );
  const notRun = [...skipped.map(r => `${r.label} SKIPPED`), ...failed.map(r => `${r.label} **FAILED**`)];
  const met =
    measured.length === 0
      ? 'SKIPPED (no driver measured)'
      : `${verdict(over.length === 0)}${over.length > 0 ? ` (over it: ${over.join(', ')})` : ''} on ${measured.map(r => r.label).join(', ')}`;
  summaryRow({
    bench: 'pageScale',
    what:
      `the file and SQL pages at ${SMALL} and at ${fmt(BIG)} acquire/petition/release cycles (BENCH_PAGE_N=${BIG}${process.env.BENCH_PAGE_N === undefined ? ', the default' : ''}), ` +
      `medians of ${OPS}, real writes through each driver in-process`,
    lockstep,
    baseline:
      measured.length === 0
        ? '—'
        : `the same at ${SMALL} cycles: ${measured
            .map(
              r =>
                `${r.label} one transition ${ms(small(r).transition)}, a read ${ms(small(r).read)}, the page ${fmt(small(r).stored)} bytes stored (${fmt(small(r).json)} bytes of JSON, ${fmt(small(r).auditLines)} audit lines)`,
            )
            .join('; ')}`,
    target: `one transition and a read ≤ ${TARGET}×: ${met}${notRun.length > 0 ? `; ${notRun.join(', ')}` : ''}`,
  });
}

async function main(): Promise<void> {
  const tmp = makeTempDir('lockstep-bench-page');
  const runs: DriverRun[] = [];
  console.log(
    `the lock page after ${SMALL} and ${fmt(BIG)} acquire/petition/release cycles per driver (real writes in-process, one Container per identity), medians of ${OPS}; node ${process.version}`,
  );
  try {
    const drivers: { label: string; variable?: string; setUp: (dir: string) => DriverSetUp }[] = [
      { label: 'file', setUp: () => fileSetUp() },
      { label: 'SQLite', setUp: dir => sqliteSetUp(dir) },
      {
        label: 'MariaDB',
        variable: 'LOCKSTEP_BENCH_MYSQL_URL',
        setUp: dir => serverSetUp(process.env.LOCKSTEP_BENCH_MYSQL_URL!, dir),
      },
      {
        label: 'PostgreSQL',
        variable: 'LOCKSTEP_BENCH_POSTGRES_URL',
        setUp: dir => serverSetUp(process.env.LOCKSTEP_BENCH_POSTGRES_URL!, dir),
      },
    ];
    for (const { label, variable, setUp } of drivers) {
      if (variable !== undefined && !process.env[variable]) {
        const why = `no server: ${variable} unset; \`bash scripts/suites/sql.sh bench pageScale\` starts one`;
        console.log(`\n!!!!!!!! SKIPPED: ${label} (${why}) !!!!!!!!\n`);
        runs.push({ label, skipped: why });
        continue;
      }
      const dir = path.join(tmp, label);
      fs.mkdirSync(dir);
      const started = performance.now();
      try {
        runs.push(await runDriver(label, setUp(dir)));
      } catch (error) {
        console.error(`\n!!!!!!!! FAILED: ${label}: ${reasonOf(error)} !!!!!!!!\n`);
        console.error(error);
        runs.push({ label, failed: reasonOf(error) });
      }
      console.log(`  ${label}: ${((performance.now() - started) / 1000).toFixed(1)} s in all (team, cycles, measurements)`);
    }
  } finally {
    removeTempDir(tmp);
  }
  for (const run of runs) {
    if (run.points) printTable(run);
    else console.log(`\n${run.label}: ${run.skipped ? `SKIPPED (${run.skipped})` : `FAILED (${run.failed})`}`);
  }
  summarize(runs);
  if (runs.some(r => r.failed)) process.exitCode = 1;
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});
