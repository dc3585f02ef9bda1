/**
 * "Your turn" and idle cost per driver (issue 30), in ONE run:
 *
 *  1. Your turn: from the holder's release (its compare-and-swap on the page answered) to the
 *     waiting `acquire --wait` of another clone returning with the grant — the library's
 *     `Container.acquire({ wait })`, each clone with its own driver connection, the waiter woken by
 *     its driver's announcement (file-system watch, Redis pub/sub, PostgreSQL NOTIFY) or its 1 s
 *     backup poll (SQLite and MariaDB announce nothing to another connection: the fast poll).
 *     Beside it, the peers on the same redis-server with their default retry settings (from their
 *     node_modules): redis-semaphore's Mutex (retryInterval 10 ms) and redlock (retryDelay 200 ms ±
 *     retryJitter 100 ms) — a waiter that retries hears of a release at its next retry.
 *  2. Idle cost: remote requests (git `ls-remote`, SQL reads) of one open window's watch over a
 *     simulated idle hour (a ManualClock, the drivers' own watch code, a store answering at once).
 *
 * PostgreSQL and MariaDB rows need their servers: `bash scripts/suites/sql.sh bench` starts throwaway
 * ones and runs this with LOCKSTEP_BENCH_POSTGRES_URL / LOCKSTEP_BENCH_MYSQL_URL; without them those
 * rows are SKIPPED, loudly. Redis needs redis-server installed (else SKIPPED).
 *
 *   npm run bench -- turnLatency     (or: node --import tsx bench/turnLatency.ts)
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Redis from 'ioredis';
import { Mutex } from 'redis-semaphore';
import { HOUR, ManualClock, systemClock, type Clock } from '../src/core/clock';
import { Container } from '../src/core/container/container';
import { openDriver } from '../src/core/drivers';
import { RemotePoller } from '../src/core/stores/git/remotePoller';
import { GIT_POLL_PACE, IDLE_INTEREST } from '../src/core/stores/pollPace';
import type { ChangeFeed } from '../src/core/stores/sql/changeFeed';
import { RecordWatches } from '../src/core/stores/sql/recordWatch';
import type { Driver } from '../src/core/stores/store';
import { createGitFixture, type GitFixture } from '../test/helpers/gitFixture';
import { runUntil, seededRandom } from '../test/helpers/simulatedPolls';
import { RedisServer } from '../test/live/redis/redisServer';
import { fmt, reasonOf, summaryRow, times, verdict } from './summary';

const ROUNDS = Number(process.env.BENCH_TURN_ROUNDS ?? 15);
/** The holder's work between the waiter going to sleep and the release (spread, so a poll's phase is random). */
const holdMs = () => 50 + Math.random() * 200;
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

interface TurnRow {
  readonly label: string;
  readonly how: string;
  readonly latencies?: number[];
  readonly skipped?: string;
  /** Why the row's run threw: the other rows still run, and the bench exits 1. */
  readonly failed?: string;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

/** A clone's driver with its compare-and-swap answers timed (the release's moment). */
function timed(driver: Driver, casDone: { at: number }): Driver {
  return {
    name: driver.name,
    distributed: driver.distributed,
    claim: driver.claim.bind(driver),
    extend: driver.extend.bind(driver),
    release: driver.release.bind(driver),
    read: driver.read.bind(driver),
    compareAndSwap: async (...args) => {
      const result = await driver.compareAndSwap(...args);
      casDone.at = performance.now();
      return result;
    },
    ...(driver.watch ? { watch: driver.watch.bind(driver) } : {}),
    close: () => driver.close(),
  };
}

/** Alice holds, bob waits (asleep in acquire --wait), alice releases: ms from her release's answer to bob's grant. */
async function turnLatencies(team: GitFixture, env: Record<string, string>): Promise<number[]> {
  const [alice, bob] = team.members as [GitFixture['members'][0], GitFixture['members'][0]];
  const opened: Driver[] = [];
  const containerOf = async (dir: string, clock?: Clock, casDone?: { at: number }) => {
    const probe = await Container.open({ cwd: dir, env });
    const raw = await openDriver(probe.config);
    await probe.close();
    opened.push(raw);
    const driverInstance = casDone ? timed(raw, casDone) : raw;
    return Container.open({ cwd: dir, env, driverInstance, ...(clock ? { clock } : {}) });
  };
  let asleep = 0;
  const waiterClock: Clock = {
    ...systemClock,
    sleep: (ms, signal) => {
      if (ms >= 1_000) asleep++;
      return systemClock.sleep(ms, signal);
    },
  };
  const released = { at: 0 };
  const a = await containerOf(alice.dir, undefined, released);
  const b = await containerOf(bob.dir, waiterClock);
  const latencies: number[] = [];
  try {
    for (let round = -2; round < ROUNDS; round++) {
      await a.acquire();
      const before = asleep;
      const waiting = b.acquire({ wait: 60 });
      while (asleep === before) await sleep(2);
      await sleep(holdMs());
      await a.release();
      const releasedAt = released.at;
      await waiting;
      const latency = performance.now() - releasedAt;
      if (round >= 0) latencies.push(latency);
      await b.release();
    }
  } finally {
    await a.close();
    await b.close();
    await Promise.all(opened.map(d => d.close()));
  }
  return latencies;
}

async function containerRow(
  label: string,
  how: string,
  setUp: () => Promise<{ env: Record<string, string>; initArgs?: string[]; beforeInit?: string[][] } | string>,
): Promise<TurnRow> {
  try {
    const set = await setUp();
    if (typeof set === 'string') return { label, how, skipped: set };
    return await measuredRow(label, how, set);
  } catch (error) {
    console.error(`\n!!!!!!!! FAILED: your-turn row ${label}: ${reasonOf(error)} !!!!!!!!\n`);
    console.error(error);
    return { label, how, failed: reasonOf(error) };
  }
}

async function measuredRow(
  label: string,
  how: string,
  set: { env: Record<string, string>; initArgs?: string[]; beforeInit?: string[][] },
): Promise<TurnRow> {
  const team = await createGitFixture({
    members: ['alice', 'bob'],
    operators: [],
    env: set.env,
    ...(set.initArgs ? { initArgs: set.initArgs } : {}),
    ...(set.beforeInit ? { beforeInit: set.beforeInit } : {}),
  });
  try {
    return { label, how, latencies: await turnLatencies(team, { ...set.env, LOCKSTEP_PATH: team.store }) };
  } finally {
    team.dispose();
  }
}

/** A peer on Redis: the holder holds, a waiter retries with the library's defaults; ms from release to its acquire. */
async function peerLatencies(url: string, kind: 'redlock' | 'redis-semaphore'): Promise<number[]> {
  const holderClient = new Redis(url);
  const waiterClient = new Redis(url);
  const resource = `bench-turn-${kind}-${randomBytes(4).toString('hex')}`;
  const latencies: number[] = [];
  try {
    for (let round = -2; round < ROUNDS; round++) {
      let releasedAt = 0;
      let acquiredAt = 0;
      if (kind === 'redis-semaphore') {
        const held = new Mutex(holderClient, resource, { refreshInterval: 0 });
        await held.acquire();
        const waiter = new Mutex(waiterClient, resource, { refreshInterval: 0 });
        const waiting = waiter.acquire().then(() => {
          acquiredAt = performance.now();
        });
        await sleep(holdMs());
        await held.release();
        releasedAt = performance.now();
        await waiting;
        await waiter.release();
      } else {
        const holder = new Redlock([holderClient], {});
        const waiterLock = new Redlock([waiterClient], {});
        const held = await holder.acquire([resource], 30_000);
        const waiting = waiterLock.acquire([resource], 30_000).then(lock => {
          acquiredAt = performance.now();
          return lock;
        });
        await sleep(holdMs());
        await held.release();
        releasedAt = performance.now();
        await (await waiting).release();
      }
      if (round >= 0) latencies.push(acquiredAt - releasedAt);
    }
  } finally {
    holderClient.disconnect();
    waiterClient.disconnect();
  }
  return latencies;
}

// redlock 5 beta's package.json "exports" hides its typings from TypeScript; this is the part used.
type RedlockClass = new (
  clients: Redis[],
  settings: Record<string, number>,
) => { acquire(resources: string[], ttlMs: number): Promise<{ release(): Promise<unknown> }> };
const Redlock = (require('redlock') as { default: RedlockClass }).default;

/** An in-process LISTEN side that delivers nothing: the idle hour has no change to announce. */
const quietFeed: ChangeFeed = {
  subscribe: () => ({ dispose: () => undefined }),
  ready: async () => undefined,
  close: async () => undefined,
};

/** Requests of one idle window's watch over a simulated hour (the counting tests' machinery). */
async function idleHour(): Promise<{ label: string; requests: number; how: string }[]> {
  const sql = async (feed?: ChangeFeed) => {
    const clock = new ManualClock();
    let reads = 0;
    const watches = new RecordWatches(
      async () => {
        reads++;
        return '1';
      },
      { clock, random: seededRandom(3), ...(feed ? { feed } : {}) },
    );
    const watch = watches.watch('a'.repeat(64), () => undefined, { interest: () => IDLE_INTEREST });
    await runUntil(clock, HOUR);
    watch.dispose();
    return reads;
  };
  const clock = new ManualClock();
  let lsRemotes = 0;
  const poller = new RemotePoller(
    async refs => {
      lsRemotes++;
      return new Map(refs.map(r => [r, 'a'.repeat(40)]));
    },
    GIT_POLL_PACE,
    clock,
    seededRandom(3),
  );
  const watch = poller.watch(
    'refs/lockstep/x',
    () => undefined,
    'a'.repeat(40),
    () => IDLE_INTEREST,
  );
  await runUntil(clock, HOUR);
  watch.dispose();
  return [
    { label: 'git', requests: lsRemotes, how: 'git ls-remote, slow pace 30–36 s' },
    { label: 'sql: MariaDB, SQLite', requests: await sql(), how: 'reads, slow pace 30–36 s' },
    { label: 'sql: PostgreSQL', requests: await sql(quietFeed), how: 'backup reads beside LISTEN' },
    { label: 'redis', requests: 0, how: 'pub/sub: the watch has no timer' },
    { label: 'file', requests: 0, how: 'fs.watch: the watch has no timer' },
  ];
}

async function main(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-bench-turn-'));
  const redis = RedisServer.binary() ? await RedisServer.start() : undefined;
  const prefix = () => `turn-${randomBytes(4).toString('hex')}`;
  const rows: TurnRow[] = [];
  try {
    rows.push(await containerRow('file', 'fs.watch', async () => ({ env: {} })));
    rows.push(
      await containerRow('sql: SQLite', 'poll 1 s', async () => ({
        env: { LOCKSTEP_DRIVER: 'sql', LOCKSTEP_DATABASE_URL: `sqlite://${tmp}/locks.db` },
        initArgs: ['--driver', 'sql'],
        beforeInit: [['migrate']],
      })),
    );
    rows.push(
      await containerRow('redis', 'pub/sub', async () =>
        redis
          ? { env: { LOCKSTEP_DRIVER: 'redis', LOCKSTEP_REDIS_URL: redis.url, LOCKSTEP_PREFIX: prefix() }, initArgs: ['--driver', 'redis'] }
          : 'redis-server is not installed',
      ),
    );
    for (const [label, how, variable] of [
      ['sql: PostgreSQL', 'NOTIFY', 'LOCKSTEP_BENCH_POSTGRES_URL'],
      ['sql: MariaDB', 'poll 1 s', 'LOCKSTEP_BENCH_MYSQL_URL'],
    ] as const) {
      const url = process.env[variable];
      rows.push(
        await containerRow(label, how, async () =>
          url
            ? {
                env: { LOCKSTEP_DRIVER: 'sql', LOCKSTEP_DATABASE_URL: url, LOCKSTEP_PREFIX: prefix() },
                initArgs: ['--driver', 'sql'],
                beforeInit: [['migrate']],
              }
            : `no ${variable}; bash scripts/suites/sql.sh bench starts a server and runs it`,
        ),
      );
    }
    if (redis) {
      rows.push({ label: 'peer: redis-semaphore', how: 'retry 10 ms', latencies: await peerLatencies(redis.url, 'redis-semaphore') });
      rows.push({ label: 'peer: redlock', how: 'retry 200±100 ms', latencies: await peerLatencies(redis.url, 'redlock') });
    }
  } finally {
    await redis?.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
  }

  console.log(`\nYour turn: release → the waiting acquire --wait returns (${ROUNDS} rounds each, node ${process.version})`);
  console.log("  Lockstep's figure includes the waiter's own acquisition (a read and the page's compare-and-swap); a peer's, its SET.");
  console.log('| driver                | wakes on         | p50 ms | p90 ms | target p50 |');
  console.log('|-----------------------|------------------|-------:|-------:|-----------:|');
  const targets: Record<string, number> = { file: 100, redis: 100, 'sql: PostgreSQL': 100, 'sql: SQLite': 1_000, 'sql: MariaDB': 1_000 };
  for (const row of rows) {
    if (row.skipped) {
      console.log(`| ${row.label.padEnd(21)} | ${row.how.padEnd(16)} | SKIPPED: ${row.skipped}`);
      console.log(`\n!!!!!!!! SKIPPED: your-turn row ${row.label} (${row.skipped}) !!!!!!!!\n`);
      continue;
    }
    if (row.failed) {
      console.log(`| ${row.label.padEnd(21)} | ${row.how.padEnd(16)} | FAILED: ${row.failed}`);
      continue;
    }
    const xs = row.latencies!;
    const target = targets[row.label];
    const verdict = target === undefined ? 'peer' : `≤ ${target} ${quantile(xs, 0.5) <= target ? 'met' : 'NOT met'}`;
    console.log(
      `| ${row.label.padEnd(21)} | ${row.how.padEnd(16)} | ${quantile(xs, 0.5).toFixed(1).padStart(6)} | ${quantile(xs, 0.9).toFixed(1).padStart(6)} | ${verdict.padStart(10)} |`,
    );
  }
  const lockstepRedis = rows.find(r => r.label === 'redis')?.latencies;
  for (const peer of ['peer: redis-semaphore', 'peer: redlock']) {
    const xs = rows.find(r => r.label === peer)?.latencies;
    if (lockstepRedis && xs)
      console.log(`  lockstep redis / ${peer.slice(6)}: ${(quantile(lockstepRedis, 0.5) / quantile(xs, 0.5)).toFixed(2)}× (p50)`);
  }

  console.log('\nIdle cost: remote requests of one open window’s watch over a simulated idle hour (target ≤ 120; Redis and file 0)');
  console.log('| driver                | requests/h | what                             |');
  console.log('|-----------------------|-----------:|----------------------------------|');
  const idle = await idleHour();
  for (const row of idle) console.log(`| ${row.label.padEnd(21)} | ${String(row.requests).padStart(10)} | ${row.how.padEnd(32)} |`);
  console.log(
    '  (the VS Code window adds a 30 s safety re-read only where the watch states no freshness of its own: Redis and file, 120 reads/h)',
  );
  summarize(rows, targets, idle);
  if (rows.some(r => r.failed)) process.exitCode = 1;
}

const msText = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

/** The run-wide summary's two rows (bench/summary.ts), as README's: your turn per driver beside the peers, and the idle hour. */
function summarize(
  rows: readonly TurnRow[],
  targets: Record<string, number>,
  idle: readonly { label: string; requests: number; how: string }[],
): void {
  const bench = 'turnLatency';
  const names: Record<string, string> = {
    file: 'file',
    redis: 'Redis',
    'sql: PostgreSQL': 'PostgreSQL',
    'sql: SQLite': 'SQLite',
    'sql: MariaDB': 'MariaDB',
  };
  const ours = rows.filter(r => targets[r.label] !== undefined);
  const measured = ours.filter(r => r.latencies);
  const skipped = ours.filter(r => r.skipped);
  const failed = ours.filter(r => r.failed);
  const p50 = (r: TurnRow) => quantile(r.latencies!, 0.5);
  const lockstep = [
    ...measured.map(r => `${names[r.label]} ${msText(p50(r))} ms (${r.how})`),
    ...skipped.map(r => `${names[r.label]} SKIPPED (${r.skipped!.split(';')[0]})`),
    ...failed.map(r => `${names[r.label]} **FAILED** (${r.failed})`),
  ].join('; ');
  const redisRow = rows.find(r => r.label === 'redis' && r.latencies);
  const peers = [
    ['peer: redis-semaphore', 'redis-semaphore (retry 10 ms)'],
    ['peer: redlock', 'redlock (retry 200 ± 100 ms)'],
  ]
    .map(([label, name]) => {
      const peer = rows.find(r => r.label === label && r.latencies);
      if (!peer) return undefined;
      const ratio = redisRow ? `: Lockstep on Redis **${times(p50(redisRow) / p50(peer))}**` : '';
      return `${name} ${msText(p50(peer))} ms${ratio}`;
    })
    .filter(text => text !== undefined);
  const missed = measured.filter(r => p50(r) > targets[r.label]!).map(r => names[r.label]);
  const met =
    measured.length === 0
      ? 'SKIPPED (no driver measured)'
      : `${verdict(missed.length === 0)}${missed.length > 0 ? ` (${missed.join(', ')} over)` : ''}${skipped.length + failed.length > 0 ? ` on ${measured.map(r => names[r.label]).join(', ')}` : ''}${skipped.length > 0 ? `; ${skipped.map(r => names[r.label]).join(', ')} SKIPPED` : ''}${failed.length > 0 ? `; ${failed.map(r => names[r.label]).join(', ')} **FAILED**` : ''}`;
  summaryRow({
    bench,
    what: `your turn, from a release to the waiting \`acquire --wait\` returning with the grant (p50 of ${ROUNDS}; another clone, its own connection)`,
    lockstep,
    baseline:
      peers.length > 0
        ? `on the same redis-server, peers with their default retries: ${peers.join('; ')}; Lockstep's figure includes its own acquisition (a read and the page's compare-and-swap), a peer's one \`SET\``
        : `SKIPPED: ${rows.find(r => r.label === 'redis')?.skipped ?? 'redis-server is not installed'} (the peers run on it)`,
    target: `p50 ≤ 100 ms on Redis, PostgreSQL and file, ≤ 1 s on SQLite and MariaDB: ${met}`,
  });
  const requests = (label: string) => idle.find(r => r.label === label)!.requests;
  const [git, sql, pg, redis, file] = ['git', 'sql: MariaDB, SQLite', 'sql: PostgreSQL', 'redis', 'file'].map(requests) as [
    number,
    number,
    number,
    number,
    number,
  ];
  summaryRow({
    bench,
    what: "idle cost, remote requests of one open window's watch over a simulated idle hour (the counting tests' ManualClock and the drivers' own watch code)",
    lockstep: `git ${fmt(git)} \`ls-remote\`; MariaDB, SQLite ${fmt(sql)} reads; PostgreSQL ${fmt(pg)} backup reads beside \`LISTEN\`; Redis ${fmt(redis)}; file ${fmt(file)}`,
    // The pace before issue 30: git's ls-remote every 2 s, a SQL read every 1 s, per hour.
    baseline: `before issue 30: git ${fmt(HOUR / 2_000)} (every 2 s), SQL ${fmt(HOUR / 1_000)} (every 1 s)`,
    target: `≤ 120 (Redis and file 0): ${verdict(Math.max(git, sql, pg) <= 120 && redis === 0 && file === 0)}`,
  });
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});
