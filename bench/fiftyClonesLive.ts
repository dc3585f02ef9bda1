/**
 * Fifty clones at once, with real processes (issue 30's target: "the holder's heartbeat and release p95 ≤ 2× their
 * idle p95 on every driver; every petition recorded"). bench/fiftyClones.ts counts the requests of fifty windows on
 * a simulated clock; this one runs them. Per driver, on one page (container) of a real team (a bare remote and its
 * clones, test/helpers/gitFixture.ts) against a real backend:
 *
 *  - idle: holders take turns, nobody else running. A turn: two heartbeats and a release (each timed), then the
 *    next holder, the queue's head, acquires (not timed). Each holder is a clone of its own in this process, on the
 *    library's Container; ROUNDS releases and 2 × ROUNDS heartbeats.
 *  - loaded: the same turns while BENCH_CLONES (default 50) windows run, each a Node process of its own on a clone
 *    of its own (bench/clones/cloneWindow.ts, bundled once: the container, the extension's WatchKeeper over the
 *    driver's watch at its real pace, one read of the page per change). The windows petition in bursts of
 *    BURST at the same moment, one burst at the start of each of the first turns, and keep watching — queued behind
 *    the holders, never the queue's head, so the polling drivers poll at their slow pace (git `ls-remote` every
 *    30–36 s, MariaDB/SQLite a read every 30–36 s: src/extension/windowInterest.ts), fast for a minute after the
 *    window's petition (the user acted); BENCH_QUEUED_FAST=1 polls fast while queued, as before issue 30's change
 *    (git every 1.6–2 s, MariaDB/SQLite every 0.8–1 s). The holders petitioned first, so the turns pass among them
 *    while every window stays queued.
 *  - then the page is read: every window's petition must be in its queue or its audit.
 *
 * Why holders take turns: a release hands the lock to the queue's head, and with fifty windows queued the one
 * who released could not acquire again for fifty handover windows; the holders queued ahead of the windows
 * keep each release an ordinary one, followed by the next holder's acquire.
 *
 * Each driver's row is printed as soon as it is measured, and the whole table again at the end. A driver whose run
 * throws (a holder's git timeout at high load, a server that does not answer) gets a FAILED row with its error's class
 * and message (credentials in URLs redacted), the next driver runs, and the bench exits 1 at the end.
 *
 * Wall-clock latencies on a shared machine: the load average (as `uptime` prints it) is printed with each row.
 * PostgreSQL and MariaDB need their servers: `bash scripts/suites/sql.sh bench fiftyClonesLive` starts throwaway
 * ones; without LOCKSTEP_BENCH_POSTGRES_URL / LOCKSTEP_BENCH_MYSQL_URL those rows are SKIPPED, loudly, as are
 * Redis and etcd without redis-server / etcd installed. etcd runs as one member (EtcdCluster.start(1)): three would
 * add two more fsyncs per write on this one disk and more processes beside the fifty windows.
 *
 *   npm run bench -- fiftyClonesLive   BENCH_CLONES=N  BENCH_FIFTY_ROUNDS=N  BENCH_FIFTY_DRIVERS=file,git,…
 *   BENCH_FIFTY_BUDGET_S=S (a phase's turns stop after S seconds, default 120)  BENCH_FIFTY_TRACE=1 (every sample)
 *   BENCH_SETTLE_MS=N: the longest pause before a window that neither holds nor heads the queue reads a change it heard
 *   (src/extension/windowInterest.ts, 1,000 ms in the extension) is N ms instead; 0: every change is read at once. The
 *   bench's windows never hold or head the queue, so every one of them pauses.
 *   BENCH_WINDOWS_NICE=N: the windows (and the git processes they start) run at scheduling priority N (19: lowest), the
 *   holder and the backends at the normal one — a diagnosis, not the target's setting: on a team each window is on a
 *   machine of its own, and this separates what the windows' CPU on this machine's cores costs the holder from what
 *   their traffic to the page costs it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { Container } from '../src/core/container/container';
import { openDriver } from '../src/core/drivers';
import { redact } from '../src/core/git/gitError';
import type { Driver } from '../src/core/stores/store';
import { BYSTANDER_SETTLE_MS } from '../src/extension/windowInterest';
import { REPO_ROOT } from '../test/helpers/children';
import { createGitFixture } from '../test/helpers/gitFixture';
import { makeTempDir, removeTempDir } from '../test/helpers/tempDir';
import { EtcdCluster } from '../test/live/etcd/etcdCluster';
import { RedisServer } from '../test/live/redis/redisServer';
import { summaryRow, times, verdict } from './summary';

const CLONES = Number(process.env.BENCH_CLONES ?? 50);
/** Releases per phase (each holder's turn: HEARTBEATS heartbeats, one release). */
const ROUNDS = Number(process.env.BENCH_FIFTY_ROUNDS ?? 20);
const HEARTBEATS = 2;
/** Windows that petition at the same moment. */
const BURST = 10;
const READY_MS = 180_000;
/** The windows' scheduling priority (BENCH_WINDOWS_NICE, a diagnosis; see the top of the file), or the normal one. */
const WINDOWS_NICE = process.env.BENCH_WINDOWS_NICE === undefined ? undefined : Number(process.env.BENCH_WINDOWS_NICE);
if (WINDOWS_NICE !== undefined && !(Number.isInteger(WINDOWS_NICE) && WINDOWS_NICE >= 0 && WINDOWS_NICE <= 19)) {
  console.error('BENCH_WINDOWS_NICE must be a whole number from 0 to 19');
  process.exit(2);
}
/** A phase's turns stop after this many seconds (the turn running ends first), so that a full run stays bounded. */
const TURNS_BUDGET_S = Number(process.env.BENCH_FIFTY_BUDGET_S ?? 120);
const PETITIONS_MS = 120_000;
/** How the windows, queued behind the holders, poll (the "windows watch by" column). */
const QUEUED_POLL =
  process.env.BENCH_QUEUED_FAST === '1'
    ? { sql: 'poll 0.8–1 s (queued, BENCH_QUEUED_FAST)', git: 'ls-remote 1.6–2 s (queued, BENCH_QUEUED_FAST)' }
    : {
        sql: 'poll 30–36 s (queued, not the head; 0.8–1 s for a minute after its petition)',
        git: 'ls-remote 30–36 s (queued, not the head; 1.6–2 s for a minute after its petition)',
      };
const WANTED = process.env.BENCH_FIFTY_DRIVERS?.split(',').map(d => d.trim());

interface Setup {
  readonly env: Record<string, string>;
  readonly initArgs?: string[];
  readonly beforeInit?: string[][];
}
interface DriverCase {
  readonly label: string;
  readonly watch: string;
  readonly setUp: () => Promise<Setup | string>;
}
interface Phase {
  readonly heartbeat: number[];
  readonly release: number[];
  /** Per sample: petitions of windows were in flight when it started or ended (the bursts' compare-and-swap races). */
  readonly heartbeatInBurst: boolean[];
  readonly releaseInBurst: boolean[];
  load: [number, number];
  turns: number;
  /** The holders' compare-and-swap writes in the phase, and how many of them lost a race (the page had moved). */
  writes: number;
  lostRaces: number;
  /** The most races one timed transition (a heartbeat, a release) lost before its write landed. */
  longestLosingRun: number;
}
const newPhase = (): Phase => ({
  heartbeat: [],
  release: [],
  heartbeatInBurst: [],
  releaseInBurst: [],
  load: [load1(), 0],
  turns: 0,
  writes: 0,
  lostRaces: 0,
  longestLosingRun: 0,
});
interface Row {
  readonly label: string;
  readonly watch: string;
  readonly skipped?: string;
  /** The driver's measurement threw: its error's class and message (redacted); the other drivers still run. */
  readonly failed?: string;
  readonly idle?: Phase;
  readonly loaded?: Phase;
  readonly petitions?: { recorded: number; acknowledged: number; errors: string[]; lost: number };
  readonly windowReads?: number;
  readonly loadedSeconds?: number;
}

const quantile = (xs: readonly number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};
const load1 = () => os.loadavg()[0] ?? 0;

/** The window's code as one CommonJS file, its packages (drivers' clients, better-sqlite3) from the project's node_modules. */
async function bundleWindow(dir: string): Promise<string> {
  const outfile = path.join(dir, 'cloneWindow.js');
  await esbuild.build({
    entryPoints: [path.join(REPO_ROOT, 'bench', 'clones', 'cloneWindow.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
    // The clients stay outside, loaded only by the driver that needs them, as in dist/ (scripts/build.mjs).
    external: ['vscode', 'better-sqlite3', 'pg-native', 'cpu-features', 'pg', 'mysql2', 'mysql2/promise', 'ioredis', 'etcd3'],
  });
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return outfile;
}

/** The environment of every process on the page: this one's without LOCKSTEP_*, plus the driver's. */
function pageEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('LOCKSTEP_') && !k.startsWith('NODE_OPTIONS')) env[k] = v;
  return { ...env, ...extra };
}

class Windows {
  readonly children: ChildProcess[] = [];
  readonly petitioned = new Map<number, { ok: boolean; error?: string }>();
  /** Windows 0…sent - 1 were told to petition. */
  sent = 0;
  reads = 0;
  private readonly readyOnes = new Set<number>();
  private readonly stopped = new Set<number>();

  constructor(script: string, dirs: readonly string[], env: NodeJS.ProcessEnv) {
    for (const [i, dir] of dirs.entries()) {
      const child = fork(script, [dir], { cwd: dir, env, execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
      if (WINDOWS_NICE !== undefined && child.pid !== undefined) os.setPriority(child.pid, WINDOWS_NICE);
      let stderr = '';
      child.stderr?.on('data', chunk => {
        stderr = (stderr + String(chunk)).slice(-2_000);
      });
      child.on('message', (m: { type: string; ok?: boolean; error?: string; reads?: number }) => {
        if (m.type === 'ready') this.readyOnes.add(i);
        else if (m.type === 'petitioned') this.petitioned.set(i, { ok: m.ok === true, ...(m.error ? { error: m.error } : {}) });
        else if (m.type === 'stats') this.reads += m.reads ?? 0;
        else if (m.type === 'failed') console.error(`window ${i} failed: ${m.error}`);
      });
      child.on('exit', code => {
        this.stopped.add(i);
        if (code !== 0 && !this.readyOnes.has(i)) console.error(`window ${i} exited ${code} before it was ready: ${stderr}`);
      });
      this.children.push(child);
    }
  }

  async until(what: string, done: () => boolean, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
      await new Promise(resolve => setTimeout(resolve, 50));
    }
  }

  ready(): Promise<void> {
    return this.until(
      `${this.children.length} windows ready`,
      () => {
        if (this.stopped.size > 0) throw new Error(`${this.stopped.size} window(s) exited before all were ready`);
        return this.readyOnes.size === this.children.length;
      },
      READY_MS,
    );
  }

  /** Windows `from`…`to - 1` petition, at the same moment. */
  petition(from: number, to: number): void {
    for (const child of this.children.slice(from, to)) child.send({ type: 'petition' });
    this.sent = Math.max(this.sent, Math.min(to, this.children.length));
  }

  /** Some window's petition is not answered yet. */
  inFlight(): boolean {
    return this.petitioned.size < this.sent;
  }

  /** Each window says how many reads it made, then exits; what does not exit within 10 s is killed. */
  async stop(): Promise<void> {
    for (const [i, child] of this.children.entries()) if (!this.stopped.has(i) && child.connected) child.send({ type: 'stop' });
    await this.until('windows stopped', () => this.stopped.size === this.children.length, 10_000).catch(() => undefined);
    this.kill();
  }

  kill(): void {
    for (const [i, child] of this.children.entries()) if (!this.stopped.has(i)) child.kill('SIGKILL');
  }
}

/** Holders take turns: `order[0]` holds; each one heartbeats, releases, and the next acquires. */
/** Returns the turns taken (fewer than order.length - 1 when the budget ran out). */
async function turns(holders: readonly Container[], order: readonly number[], phase: Phase, windows?: Windows): Promise<number> {
  const deadline = performance.now() + TURNS_BUDGET_S * 1000;
  const [writes, lost] = [casCount.writes, casCount.lost];
  const timed = async (op: () => Promise<unknown>, into: number[], inBurst: boolean[]) => {
    const before = windows?.inFlight() ?? false;
    const lostBefore = casCount.lost;
    const t = performance.now();
    await op();
    into.push(performance.now() - t);
    phase.longestLosingRun = Math.max(phase.longestLosingRun, casCount.lost - lostBefore);
    inBurst.push(before || (windows?.inFlight() ?? false));
  };
  let turn = 0;
  for (; turn + 1 < order.length && performance.now() < deadline; turn++) {
    // The windows of one burst petition at the same moment, at the start of the first turns.
    if (windows && turn * BURST < CLONES) windows.petition(turn * BURST, Math.min(CLONES, (turn + 1) * BURST));
    const holder = holders[order[turn]!]!;
    for (let beat = 0; beat < HEARTBEATS; beat++) await timed(() => holder.heartbeat(), phase.heartbeat, phase.heartbeatInBurst);
    await timed(() => holder.release(), phase.release, phase.releaseInBurst);
    await holders[order[turn + 1]!]!.acquire();
  }
  phase.writes = casCount.writes - writes;
  phase.lostRaces = casCount.lost - lost;
  return turn;
}

/** What the holders' compare-and-swap writes met: counted into the phase that runs. */
const casCount = { writes: 0, lost: 0 };

/** A holder's container on a driver of its own whose compare-and-swap answers are counted. */
async function openHolder(cwd: string, env: Record<string, string>, opened: Driver[]): Promise<Container> {
  const probe = await Container.open({ cwd, env });
  const raw = await openDriver(probe.config);
  await probe.close();
  opened.push(raw);
  const counted: Driver = {
    name: raw.name,
    distributed: raw.distributed,
    claim: raw.claim.bind(raw),
    extend: raw.extend.bind(raw),
    release: raw.release.bind(raw),
    read: raw.read.bind(raw),
    compareAndSwap: async (...args) => {
      const result = await raw.compareAndSwap(...args);
      casCount.writes++;
      if (!result.ok) casCount.lost++;
      return result;
    },
    ...(raw.watch ? { watch: raw.watch.bind(raw) } : {}),
    close: () => raw.close(),
  };
  return Container.open({ cwd, env, driverInstance: counted });
}

async function measure(driver: DriverCase, script: string): Promise<Row> {
  const set = await driver.setUp();
  if (typeof set === 'string') return { label: driver.label, watch: driver.watch, skipped: set };
  const holderNames = Array.from({ length: ROUNDS + 1 }, (_, i) => `holder${i}`);
  const windowNames = Array.from({ length: CLONES }, (_, i) => `window${i}`);
  const team = await createGitFixture({
    members: [...holderNames, ...windowNames],
    operators: [],
    env: set.env,
    ...(set.initArgs ? { initArgs: set.initArgs } : {}),
    ...(set.beforeInit ? { beforeInit: set.beforeInit } : {}),
  });
  const env = { ...set.env, LOCKSTEP_PATH: team.store };
  const holders: Container[] = [];
  const drivers: Driver[] = [];
  let windows: Windows | undefined;
  try {
    for (const name of holderNames) holders.push(await openHolder(team.member(name).dir, env, drivers));
    // Idle: holder0 holds, the others queue behind it; the turns pass down the queue.
    const idle = newPhase();
    await holders[0]!.acquire();
    for (let i = 1; i <= ROUNDS; i++) await holders[i]!.petition();
    idle.turns = await turns(
      holders,
      holders.map((_, i) => i),
      idle,
    );
    idle.load[1] = load1();
    // Loaded: the holders queue again (holder ROUNDS holds), then the windows start and petition behind them.
    for (let i = 0; i < ROUNDS; i++) await holders[i]!.petition();
    windows = new Windows(
      script,
      windowNames.map(n => team.member(n).dir),
      pageEnv(env),
    );
    const spawned = performance.now();
    await windows.ready();
    console.error(`[fiftyClonesLive] ${driver.label}: ${CLONES} windows ready in ${((performance.now() - spawned) / 1000).toFixed(1)} s`);
    const loaded = newPhase();
    const started = performance.now();
    const w = windows;
    loaded.turns = await turns(holders, [ROUNDS, ...holders.slice(0, ROUNDS).map((_, i) => i)], loaded, w);
    // Windows left over (more bursts than turns) petition now.
    if (w.sent < CLONES) w.petition(w.sent, CLONES);
    await w
      .until('every window answered its petition', () => w.petitioned.size === CLONES, PETITIONS_MS)
      .catch(error => {
        console.error(`${driver.label}: ${(error as Error).message} (${w.petitioned.size}/${CLONES})`);
      });
    loaded.load[1] = load1();
    const loadedSeconds = (performance.now() - started) / 1000;
    // The answers so far, taken before the page is read: a petition still in flight (the wait above ran out) that is
    // acknowledged during the read may land after it, and would count as lost.
    const answered = new Map(w.petitioned);
    // Every petition on the page: in the queue, or (a petitioner that left it) in the audit.
    const { record } = await holders[0]!.read();
    const onPage = new Set([...record.queue.map(p => p.identity), ...record.audit.filter(l => l.action === 'petition').map(l => l.who)]);
    const recordedIdentities = windowNames.map(n => team.member(n).identity).filter(id => onPage.has(id));
    const acknowledged = [...answered.values()].filter(p => p.ok).length;
    const lost = windowNames.filter((n, i) => answered.get(i)?.ok === true && !onPage.has(team.member(n).identity)).length;
    const errors = [...answered.values()].filter(p => !p.ok).map(p => p.error ?? '?');
    await w.stop();
    return {
      label: driver.label,
      watch: driver.watch,
      idle,
      loaded,
      petitions: { recorded: recordedIdentities.length, acknowledged, errors, lost },
      windowReads: w.reads,
      loadedSeconds,
    };
  } finally {
    windows?.kill();
    for (const holder of holders) await holder.close().catch(() => undefined);
    for (const driver of drivers) await driver.close().catch(() => undefined);
    team.dispose();
  }
}

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

function printHeader(): void {
  console.log(
    `\nFifty clones at once: ${CLONES} window processes on one page, ${ROUNDS} holder turns per phase (${HEARTBEATS} heartbeats + 1 release each); the windows read a change after 0–${process.env.BENCH_SETTLE_MS ?? BYSTANDER_SETTLE_MS} ms${process.env.BENCH_SETTLE_MS === undefined ? '' : ' (BENCH_SETTLE_MS)'}${WINDOWS_NICE === undefined ? '' : `; the windows at nice ${WINDOWS_NICE} (BENCH_WINDOWS_NICE)`}; node ${process.version}, ${os.cpus().length} CPUs`,
  );
  console.log(
    '| driver | windows watch by | heartbeat p50/p95 ms idle → loaded | ratio p95 | release p50/p95 ms idle → loaded | ratio p95 | petitions recorded | load (1 min) idle; loaded |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
}

/** The driver's row of the table, and for a skipped or failed driver a banner that cannot be missed. */
function printRow(row: Row): void {
  if (row.skipped || row.failed) {
    const [word, why] = row.skipped ? ['SKIPPED', row.skipped] : ['FAILED', row.failed];
    console.log(`| ${row.label} | ${row.watch} | ${word}: ${why} | | | | | |`);
    console.log(`\n!!!!!!!! ${word}: fiftyClonesLive ${row.label} (${why}) !!!!!!!!\n`);
    return;
  }
  const idle = row.idle!;
  const loaded = row.loaded!;
  const p = row.petitions!;
  if (process.env.BENCH_FIFTY_TRACE)
    console.log(JSON.stringify({ label: row.label, idle, loaded }, (_, v) => (typeof v === 'number' ? Math.round(v) : v)));
  const hb = quantile(loaded.heartbeat, 0.95) / quantile(idle.heartbeat, 0.95);
  const rel = quantile(loaded.release, 0.95) / quantile(idle.release, 0.95);
  const verdict = (r: number) => `${r.toFixed(2)}× ${r <= 2 ? 'met' : '**MISSED**'}`;
  console.log(
    `| ${row.label} | ${row.watch} | ${ms(quantile(idle.heartbeat, 0.5))}/${ms(quantile(idle.heartbeat, 0.95))} → ${ms(quantile(loaded.heartbeat, 0.5))}/${ms(quantile(loaded.heartbeat, 0.95))} | ${verdict(hb)} | ${ms(quantile(idle.release, 0.5))}/${ms(quantile(idle.release, 0.95))} → ${ms(quantile(loaded.release, 0.5))}/${ms(quantile(loaded.release, 0.95))} | ${verdict(rel)} | ${p.recorded}/${CLONES}${p.recorded === CLONES ? '' : ' **MISSED**'} | ${idle.load[0].toFixed(1)}–${idle.load[1].toFixed(1)}; ${loaded.load[0].toFixed(1)}–${loaded.load[1].toFixed(1)} |`,
  );
}

/** What a measured driver's row does not say: turns, the windows' reads, petitions, lost races, bursts. */
function verdicts(row: Row): string[] {
  if (row.skipped || row.failed) return [];
  const idle = row.idle!;
  const loaded = row.loaded!;
  const p = row.petitions!;
  const lines = [
    `${row.label}: ${idle.turns} idle and ${loaded.turns} loaded turns${loaded.turns < ROUNDS || idle.turns < ROUNDS ? ` (${TURNS_BUDGET_S} s budget reached)` : ''};` +
      ` the windows read the page ${row.windowReads} times in ${row.loadedSeconds!.toFixed(0)} s of loaded turns` +
      ` (${(row.windowReads! / row.loadedSeconds!).toFixed(1)}/s); petitions acknowledged ${p.acknowledged}/${CLONES}` +
      (p.errors.length > 0 ? `, refused or failed ${p.errors.length} (${[...new Set(p.errors)].join('; ')})` : '') +
      (p.lost > 0 ? `; **${p.lost} acknowledged but not on the page: LOST**` : ''),
  ];
  const split = (xs: number[], inBurst: boolean[], during: boolean) => xs.filter((_, i) => inBurst[i] === during);
  const part = (what: string, xs: number[], inBurst: boolean[]) => {
    const during = split(xs, inBurst, true);
    const after = split(xs, inBurst, false);
    return `${what} p95 ${during.length > 0 ? ms(quantile(during, 0.95)) : '—'} ms while petitions were in flight (${during.length} samples), ${after.length > 0 ? ms(quantile(after, 0.95)) : '—'} ms after (${after.length})`;
  };
  lines.push(
    `  the holders' compare-and-swap writes (heartbeats, releases, acquires) that lost a race: idle ${idle.lostRaces}/${idle.writes}, loaded ${loaded.lostRaces}/${loaded.writes}; one heartbeat or release lost at most ${loaded.longestLosingRun}`,
  );
  lines.push(
    `  loaded ${part('heartbeat', loaded.heartbeat, loaded.heartbeatInBurst)}; ${part('release', loaded.release, loaded.releaseInBurst)}`,
  );
  return lines;
}

/** The whole table again at the end (the rows were printed one by one as they were measured), then the verdicts. */
function printTable(rows: readonly Row[]): void {
  printHeader();
  for (const row of rows) printRow(row);
  console.log('');
  for (const line of rows.flatMap(verdicts)) console.log(line);
  console.log('target: heartbeat and release p95 loaded ≤ 2× idle on every driver; every petition recorded');
}

/**
 * The run-wide summary's one row (bench/summary.ts), as README's: each driver's heartbeat and release p95 idle → loaded
 * and their ratio, the samples taken after the bursts beside them, and the targets' verdicts over the drivers measured.
 */
function summarize(rows: readonly Row[]): void {
  const measured = rows.filter(row => row.idle && row.loaded && row.petitions);
  const notMeasured = rows.filter(row => row.skipped || row.failed);
  const short = (row: Row) => row.label.split(' ')[0]!;
  const p95 = (xs: readonly number[]) => quantile(xs, 0.95);
  const ratio = (row: Row, k: 'heartbeat' | 'release') => p95(row.loaded![k]) / p95(row.idle![k]);
  const pair = (row: Row, k: 'heartbeat' | 'release', first: boolean) =>
    `${first ? row.label : short(row)} ${ms(p95(row.idle![k]))} → ${ms(p95(row.loaded![k]))}${k === 'heartbeat' && first ? ' ms' : ''} (**${times(ratio(row, k))}**)`;
  const afterBursts = (row: Row, k: 'heartbeat' | 'release') => {
    const after = row.loaded![k].filter((_, i) => row.loaded![k === 'heartbeat' ? 'heartbeatInBurst' : 'releaseInBurst'][i] === false);
    return after.length === 0
      ? `${short(row)} — (no sample)`
      : `${short(row)} ${ms(p95(after))} (${times(p95(after) / p95(row.idle![k]))} idle, ${after.length} sample${after.length === 1 ? '' : 's'})`;
  };
  const anyAfter = measured.some(row => [...row.loaded!.heartbeatInBurst, ...row.loaded!.releaseInBurst].includes(false));
  const turnsCut = measured.filter(row => row.idle!.turns < ROUNDS || row.loaded!.turns < ROUNDS);
  const petitions = measured.every(row => row.petitions!.recorded === CLONES)
    ? `${CLONES}/${CLONES} on every driver measured`
    : measured
        .map(row => `${short(row)} ${row.petitions!.recorded}/${CLONES}${row.petitions!.lost > 0 ? ` (${row.petitions!.lost} LOST)` : ''}`)
        .join(', ');
  const lockstep =
    measured.length === 0
      ? 'no driver measured'
      : `heartbeat p95 idle → loaded: ${measured.map((row, i) => pair(row, 'heartbeat', i === 0)).join(', ')}; ` +
        `release p95: ${measured.map(row => pair(row, 'release', false)).join(', ')}. Petitions recorded: ${petitions}` +
        (turnsCut.length > 0
          ? `; the ${TURNS_BUDGET_S} s budget cut the turns: ${turnsCut.map(row => `${short(row)} ${row.idle!.turns} idle, ${row.loaded!.turns} loaded`).join('; ')}`
          : '');
  const whyNot = notMeasured.map(row =>
    row.skipped ? `${row.label} SKIPPED (${row.skipped.split(';')[0]})` : `${row.label} FAILED (${row.failed})`,
  );
  // A target is met on every driver only where every driver ran: otherwise on the ones measured, and the rest said.
  const scope = (met: readonly Row[]) => {
    const partial = notMeasured.length > 0 || WANTED !== undefined;
    if (met.length === measured.length)
      return `${verdict(true)}${partial ? ` on the drivers measured (${measured.map(short).join(', ')})` : ''}`;
    return `${verdict(false)}${met.length === 0 ? ` on every driver${partial ? ' measured' : ''}` : ` (met on ${met.map(short).join(', ')} only)`}`;
  };
  const target =
    measured.length === 0
      ? 'heartbeat and release p95 ≤ 2× idle on every driver; every petition recorded: SKIPPED (no driver measured)'
      : `heartbeat and release p95 ≤ 2× idle on every driver: ${scope(measured.filter(row => ratio(row, 'heartbeat') <= 2 && ratio(row, 'release') <= 2))}; ` +
        `every petition recorded: ${scope(measured.filter(row => row.petitions!.recorded === CLONES))}`;
  const options = [
    WINDOWS_NICE === undefined ? '' : `; the windows at nice ${WINDOWS_NICE} (BENCH_WINDOWS_NICE)`,
    process.env.BENCH_SETTLE_MS === undefined ? '' : `; the read pause 0–${process.env.BENCH_SETTLE_MS} ms (BENCH_SETTLE_MS)`,
    process.env.BENCH_QUEUED_FAST === '1' ? '; queued windows poll fast (BENCH_QUEUED_FAST=1)' : '',
    WANTED === undefined ? '' : `; drivers ${WANTED.join(', ')} only (BENCH_FIFTY_DRIVERS)`,
  ].join('');
  summaryRow({
    bench: 'fiftyClonesLive',
    what:
      `${CLONES} windows as real processes on one page, each a clone and a Node process of its own running the extension's \`WatchKeeper\` over its driver's watch, ` +
      `petitioning in bursts of ${BURST} and then watching, queued behind the holders (never the head): the holders' heartbeat and release p95 while they run, ` +
      `against the same with nobody else running (${ROUNDS} turns each: ${ROUNDS * HEARTBEATS} heartbeats, ${ROUNDS} releases)${options}`,
    lockstep: [lockstep, ...whyNot].join('; '),
    baseline:
      measured.length === 0
        ? '—'
        : !anyAfter
          ? 'no loaded sample was taken after the bursts (every timed transition overlapped a petition in flight)'
          : `the loaded samples taken after the bursts (every window queued and watching, no petition in flight): heartbeat p95 ${measured.map(row => afterBursts(row, 'heartbeat')).join(', ')}; ` +
            `release p95 ${measured.map(row => afterBursts(row, 'release')).join(', ')}`,
    target,
  });
}

/** A driver's failure as its row says it: the error's class and first line, URLs' credentials and object names redacted. */
function failure(error: unknown): string {
  if (!(error instanceof Error)) return `${typeof error} thrown`;
  const line = redact(error.message.split('\n')[0] ?? '').replaceAll('|', '/');
  return `${error.constructor.name}: ${line.length > 200 ? `${line.slice(0, 200)}…` : line}`;
}

async function main(): Promise<void> {
  const tmp = makeTempDir('lockstep-bench-fifty');
  let redis: RedisServer | undefined;
  let etcd: EtcdCluster | undefined;
  const prefix = () => `fifty-${randomBytes(4).toString('hex')}`;
  const rows: Row[] = [];
  try {
    const script = await bundleWindow(tmp);
    const sqlCase = (label: string, watch: string, variable: string): DriverCase => ({
      label,
      watch,
      setUp: async () => {
        const url = process.env[variable];
        return url
          ? {
              env: { LOCKSTEP_DRIVER: 'sql', LOCKSTEP_DATABASE_URL: url, LOCKSTEP_PREFIX: prefix() },
              initArgs: ['--driver', 'sql'],
              beforeInit: [['migrate']],
            }
          : `no ${variable}; bash scripts/suites/sql.sh bench fiftyClonesLive starts a server and runs it`;
      },
    });
    const drivers: DriverCase[] = [
      { label: 'file', watch: 'fs.watch', setUp: async () => ({ env: {} }) },
      {
        label: 'SQLite',
        watch: QUEUED_POLL.sql,
        setUp: async () => ({
          env: { LOCKSTEP_DRIVER: 'sql', LOCKSTEP_DATABASE_URL: `sqlite://${tmp}/locks.db` },
          initArgs: ['--driver', 'sql'],
          beforeInit: [['migrate']],
        }),
      },
      sqlCase('PostgreSQL', 'LISTEN/NOTIFY', 'LOCKSTEP_BENCH_POSTGRES_URL'),
      sqlCase('MariaDB', QUEUED_POLL.sql, 'LOCKSTEP_BENCH_MYSQL_URL'),
      {
        label: 'Redis',
        watch: 'pub/sub',
        setUp: async () => {
          if (!RedisServer.binary()) return 'redis-server is not installed';
          redis = await RedisServer.start();
          return {
            env: { LOCKSTEP_DRIVER: 'redis', LOCKSTEP_REDIS_URL: redis.url, LOCKSTEP_PREFIX: prefix() },
            initArgs: ['--driver', 'redis'],
          };
        },
      },
      {
        label: 'etcd (one member)',
        watch: 'etcd watch',
        setUp: async () => {
          if (!EtcdCluster.binary()) return 'etcd is not installed';
          etcd = await EtcdCluster.start(1);
          return {
            env: { LOCKSTEP_DRIVER: 'etcd', LOCKSTEP_ETCD_ENDPOINTS: etcd.endpoints, LOCKSTEP_PREFIX: prefix() },
            initArgs: ['--driver', 'etcd'],
          };
        },
      },
      {
        label: 'git (local bare remote)',
        watch: QUEUED_POLL.git,
        setUp: async () => ({ env: {}, initArgs: ['--driver', 'git'] }),
      },
    ];
    printHeader();
    for (const driver of drivers) {
      if (WANTED && !WANTED.some(w => driver.label.toLowerCase().startsWith(w.toLowerCase()))) continue;
      const started = Date.now();
      let row: Row;
      try {
        row = await measure(driver, script);
      } catch (error) {
        row = { label: driver.label, watch: driver.watch, failed: failure(error) };
      } finally {
        await redis?.dispose();
        redis = undefined;
        await etcd?.dispose();
        etcd = undefined;
      }
      console.error(`[fiftyClonesLive] ${driver.label}: ${((Date.now() - started) / 1000).toFixed(0)} s, load ${load1().toFixed(1)}`);
      // Printed now: a later driver's failure (or a killed run) must not lose the rows already measured.
      printRow(row);
      rows.push(row);
    }
  } finally {
    await redis?.dispose();
    await etcd?.dispose();
    removeTempDir(tmp);
  }
  printTable(rows);
  summarize(rows);
  const failed = rows.filter(row => row.failed).map(row => row.label);
  if (failed.length > 0) {
    console.error(`[fiftyClonesLive] FAILED: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});
