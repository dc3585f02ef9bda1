/**
 * `npm run chaos [-- --minutes M] [--sections S] [--workers N] [--names K] [--drivers file,sqlite,redis,etcd,git] [--parallel]` (issue 15).
 * With `--parallel`, the container slots run side by side after the plain-lease slots (see main()).
 * With `--sections S`, a plain-lease driver's run ends as soon as its log holds S critical sections, or at its share
 * of the minutes, whichever comes first (a long run sized by its proof rather than by the clock).
 *
 * Plain leases under chaos: N worker processes (chaos/leaseWorker.ts) race for K names on each driver while a
 * killer SIGKILLs a random worker every 50–500 ms (and restarts it); on Redis the server is also restarted
 * (appendonly yes) and paused (SIGSTOP) mid-run; on etcd (a three-member cluster) the leader is SIGKILLed and restarted
 * and members are paused (issue 28). Then chaos/checkLeaseLog.ts checks the log. Prints one row per
 * driver and exits non-zero on any violation.
 *
 * The harness creates every store it uses (a fresh temporary folder, SQLite file, redis-server and bare
 * repository, under one random prefix) and removes exactly those, and nothing else, at the end.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { buildSync } from 'esbuild';
import { MAX_RETRY_SLEEP_MS } from '../src/core/bounds';
import { createLockManager } from '../src/core/leases';
import { slowdown } from '../test/helpers/calibration';
import { EtcdCluster } from '../test/live/etcd/etcdCluster';
import { checkLeaseLog, type LogLine } from './checkLeaseLog';
import { runContainerChaos, type ContainerDriver } from './containerRun';
import { claimFolder, claimRedis, claimSqlDatabase, ForeignStoreError, removeMade, sqlAdmin, type Owned } from './ownedStores';
const { behaviourKey } = require('../scripts/test-counts.cjs') as { behaviourKey(titles: string[]): string };

const { values } = parseArgs({
  options: {
    minutes: { type: 'string' },
    seconds: { type: 'string' },
    sections: { type: 'string' },
    workers: { type: 'string', default: '16' },
    names: { type: 'string', default: '3' },
    drivers: { type: 'string', default: 'file,sqlite,redis,git' },
    ttl: { type: 'string', default: '1' },
    // Existing stores to run against (each must hold nothing: see ownedStores.ts).
    clones: { type: 'string', default: '5' },
    path: { type: 'string' },
    'redis-url': { type: 'string' },
    'database-url': { type: 'string', multiple: true },
    // The container slots side by side (after the plain-lease slots, which run one at a time): see main().
    parallel: { type: 'boolean', default: false },
  },
});
const DATABASE_URLS = values['database-url'] ?? [];
const urlFor = (driver: string): string => {
  const schemes = driver === 'postgres' ? ['postgres:', 'postgresql:'] : ['mariadb:', 'mysql:'];
  const url = DATABASE_URLS.find(u => schemes.includes(new URL(u).protocol));
  if (!url) throw new ForeignStoreError(`the ${driver} run needs --database-url ${schemes[0]}//… (a database the harness may use)`);
  return url;
};
const DRIVERS = (values.drivers as string).split(',');
const seconds = values.seconds !== undefined ? Number(values.seconds) : Number(values.minutes ?? '0.5') * 60;
const perDriverMs = (seconds * 1000) / DRIVERS.length;
const WORKERS = Number(values.workers);
/** `--sections`: end a plain-lease run once its log holds this many critical sections. */
const SECTIONS = values.sections === undefined ? undefined : Number(values.sections);
if (SECTIONS !== undefined && !(Number.isSafeInteger(SECTIONS) && SECTIONS > 0)) {
  console.error(`chaos: --sections must be a whole number above 0, not "${values.sections}"`);
  process.exit(2);
}
const NAMES = Array.from({ length: Number(values.names) }, (_, i) => `chaos-name-${i}`);
const TTL = Number(values.ttl);
const CLONES = Number(values.clones);
const ROOT = path.resolve(__dirname, '..');
/**
 * A slot that has seen fewer than MIN_SECTIONS critical sections (plain leases) or no grant or no landing (the
 * container protocol) when its time is up runs on, a second at a time, up to EXTEND times its length: on a loaded
 * 2-core machine the workers may still be starting when a short slot ends, and such a run proves nothing. Only the
 * duration adapts; a run still short of that at EXTEND times fails ("proves too little"): a plain-lease run with
 * fewer than its floor of critical sections (MIN_SECTIONS, GIT_MIN_SECTIONS for git, or --sections when that is smaller) is a failure, not a
 * pass with one section. EXTEND is 3 on an unloaded machine and grows with the run's slowdown factor
 * (test/helpers/calibration.ts), so that the floor asks for the same work however busy the machine is.
 */
export const EXTEND = Math.ceil(3 * slowdown());
const MIN_SECTIONS = 16;
/**
 * git's own floor: every acquire and release is a push to the one ref all 16 workers race for, and a worker needs
 * seconds to start, so a slot of 10–40 s sees about 7–10 critical sections here (every one past a 1 s lease:
 * the lost-lease path is what git's slot exercises). Its floor still fails a run that proves next to nothing.
 */
const GIT_MIN_SECTIONS = 4;
const sectionFloor = (driver: string) => Math.min(driver === 'git' ? GIT_MIN_SECTIONS : MIN_SECTIONS, SECTIONS ?? MIN_SECTIONS);
const sectionsSoFar = (log: string) => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('"kind":"enter"').length - 1 : 0);
const rand = (lo: number, hi: number) => lo + Math.random() * (hi - lo);
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));
const now = () => Date.now(); // the workers' and the leases' clock (see chaos/leaseWorker.ts)

/**
 * `faults` runs until `until()` (the slot's end, which moves when the slot is extended) and notes each fault; one
 * that takes the backend away for a while (a restart, a pause) gives its window, which goes into the log.
 */
interface Store {
  env: Record<string, string>;
  cwdOf(i: number): string;
  faults?(until: () => number, note: (what: string, outage?: { from: number; to: number }) => void): Promise<void>;
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

/** The store's folder: --path (claimed: new or empty) or a fresh one inside the run's own folder. */
function storeFolder(dir: string, owned: Owned[]): string {
  if (values.path === undefined) return path.join(dir, 'store');
  const chosen = path.resolve(values.path);
  owned.push(claimFolder(chosen));
  return chosen;
}

async function migrated(env: Record<string, string>): Promise<void> {
  const manager = createLockManager({ env });
  try {
    await manager.migrate();
  } finally {
    await manager.close();
  }
}

async function openStore(driver: string, dir: string, prefix: string, owned: Owned[]): Promise<Store> {
  const base = { LOCKSTEP_PREFIX: prefix };
  switch (driver) {
    case 'file':
      return { env: { ...base, LOCKSTEP_DRIVER: 'file', LOCKSTEP_PATH: storeFolder(dir, owned) }, cwdOf: () => dir, close: async () => {} };
    case 'sqlite': {
      const folder = storeFolder(dir, owned);
      fs.mkdirSync(folder, { recursive: true });
      const env = { ...base, LOCKSTEP_DRIVER: 'sql', LOCKSTEP_DATABASE_URL: `sqlite://${path.join(folder, 'locks.db')}` };
      await migrated(env); // a fresh database file, which the harness made
      return { env, cwdOf: () => dir, close: async () => {} };
    }
    case 'mariadb':
    case 'postgres': {
      const url = urlFor(driver);
      owned.push(await claimSqlDatabase(url));
      const env = { ...base, LOCKSTEP_DRIVER: 'sql', LOCKSTEP_DATABASE_URL: url };
      await migrated(env); // the table, which the harness now owns
      return {
        env,
        cwdOf: () => dir,
        async faults(until, note) {
          // connections killed from the server side
          const admin = await sqlAdmin(url);
          try {
            while (now() < until() - 500) {
              await sleep(rand(100, 500));
              if (await admin.killOneConnection()) note('connections killed');
            }
          } finally {
            await admin.close();
          }
        },
        close: async () => {},
      };
    }
    case 'redis': {
      if (values['redis-url'] !== undefined) {
        // someone else's server: no restarts or pauses
        owned.push(await claimRedis(values['redis-url'], prefix));
        return {
          env: { ...base, LOCKSTEP_DRIVER: 'redis', LOCKSTEP_REDIS_URL: values['redis-url'] },
          cwdOf: () => dir,
          close: async () => {},
        };
      }
      const server = process.env.LOCKSTEP_REDIS_SERVER || 'redis-server';
      const port = await freePort();
      let proc: ChildProcess | undefined;
      const ping = () => spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout?.trim() === 'PONG';
      const start = async () => {
        proc = spawn(
          server,
          ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', '', '--appendfsync', 'always'],
          { stdio: 'ignore' },
        );
        await waitFor('redis-server', ping);
      };
      const stop = async () => {
        const p = proc;
        if (!p || p.exitCode !== null) return;
        p.kill('SIGTERM');
        await waitFor('redis-server to stop', () => p.exitCode !== null || p.signalCode !== null);
      };
      await start();
      return {
        env: { ...base, LOCKSTEP_DRIVER: 'redis', LOCKSTEP_REDIS_URL: `redis://127.0.0.1:${port}` },
        cwdOf: () => dir,
        async faults(until, note) {
          while (now() < until() - 1500) {
            await sleep(rand(800, 1500));
            const from = now();
            if (Math.random() < 0.5) {
              await stop();
              await start();
              note('restarts', { from, to: now() });
            } else {
              proc?.kill('SIGSTOP');
              await sleep(rand(100, 400));
              proc?.kill('SIGCONT');
              note('pauses', { from, to: now() });
            }
          }
        },
        close: stop,
      };
    }
    case 'etcd': {
      // A three-member cluster the harness starts (test/live/etcd/etcdCluster.ts): the leader SIGKILLed and started
      // again, or a member paused (SIGSTOP/SIGCONT); a majority always runs, so typed errors only while a leader is elected.
      const cluster = await EtcdCluster.start();
      return {
        env: { ...base, LOCKSTEP_DRIVER: 'etcd', LOCKSTEP_ETCD_ENDPOINTS: cluster.endpoints },
        cwdOf: () => dir,
        async faults(until, note) {
          while (now() < until() - 2500) {
            await sleep(rand(800, 1500));
            const from = now();
            if (Math.random() < 0.5) {
              const leader = await cluster.leader();
              await leader.kill();
              await cluster.leader(); // another member leads
              // The outage lasts until the killed member is back: until then a client whose channel was to it
              // fails over to another member first (the cluster has a majority, this client does not know yet).
              await cluster.restart(leader);
              note('leader kills', { from, to: now() });
            } else {
              const member = cluster.members[Math.floor(Math.random() * cluster.members.length)]!;
              member.pause();
              await sleep(rand(100, 400));
              member.unpause();
              note('pauses', { from, to: now() });
            }
          }
        },
        close: () => cluster.dispose(),
      };
    }
    case 'git': {
      const remote = path.join(dir, 'remote.git');
      git(dir, 'init', '-q', '--bare', remote);
      slowPreReceive(remote);
      const seed = path.join(dir, 'seed');
      git(dir, 'clone', '-q', remote, seed);
      for (const [k, v] of [
        ['user.email', 'chaos@example.invalid'],
        ['user.name', 'chaos'],
      ])
        git(seed, 'config', k, v);
      fs.writeFileSync(path.join(seed, 'README'), 'chaos\n');
      git(seed, 'add', '.');
      git(seed, 'commit', '-qm', 'seed');
      git(seed, 'push', '-q', 'origin', 'HEAD');
      const clones = Array.from({ length: WORKERS }, (_, i) => {
        const c = path.join(dir, `clone-${i}`);
        git(dir, 'clone', '-q', remote, c);
        return c;
      });
      return { env: { ...base, LOCKSTEP_DRIVER: 'git' }, cwdOf: i => clones[i], close: async () => {} };
    }
    default:
      throw new Error(`unknown driver ${driver}: choose from file, sqlite, redis, etcd, git`);
  }
}

/**
 * Backend fault for git: the remote's pre-receive sleeps 0–0.9 s (mostly 0.1–0.2 s: a random byte's first digit) before
 * every push it accepts. With `overTimeout` (seconds: the container run's git timeout), 1 push in 8 sleeps 0.5–1.5 s
 * longer than that instead, so that the client gives up while the server still completes the push.
 */
export function slowPreReceive(bare: string, chained?: string, overTimeout?: number): void {
  const hook = path.join(bare, 'hooks', 'pre-receive');
  const next = chained ? `exec ${JSON.stringify(chained)} "$@"` : 'cat >/dev/null';
  const random = 'r=$(od -An -N1 -tu1 /dev/urandom | tr -d " ")';
  // r < 32 (1 in 8): t = the timeout + 0.5 s … + 1.5 s, in tenths.
  const pause =
    overTimeout !== undefined
      ? `${random}\nif [ "$r" -lt 32 ]; then t=$((${overTimeout * 10 + 5} + r / 3)); sleep "$((t / 10)).$((t % 10))"; else sleep "0.$(echo "$r" | cut -c1)"; fi`
      : 'sleep "0.$(od -An -N1 -tu1 /dev/urandom | tr -d \' \' | cut -c1)"';
  fs.writeFileSync(hook, `#!/bin/sh\n${pause}\n${next}\n`, { mode: 0o755 });
}

/**
 * The container run's git timeout (LOCKSTEP_GIT_TIMEOUT_SECONDS), which 1 in 8 of its slowed pushes outlasts. Not 2 s:
 * on this 2-core machine at a load average of 8, a 40 s run with 2 s saw 32 commands time out that no slowed push
 * outlasted (18 clears, 10 petitions, 4 withdraws: a fetch and a push, each a process start, took longer) and ran to
 * its 3× limit with 1 landing.
 */
const GIT_TIMEOUT_SECONDS = 3;

interface Row {
  /** The container protocol's counts (operations, grants, landings…), printed above its row. */
  summary?: string;
  driver: string;
  seconds: number;
  sections: number;
  kills: number;
  killedHolders: number;
  overran: number;
  longestBlockMs: number;
  faults: string;
  errors: string;
  violations: readonly string[];
  settling?: string;
}

/**
 * `container-file`, `container-sqlite`, `container-git`, `container-redis`, `container-etcd`, `container-mariadb`, `container-postgres`:
 * the container protocol (chaos/containerRun.ts). Redis runs on a redis-server the harness starts (or `--redis-url`),
 * MariaDB and PostgreSQL on `--database-url`; the clones get only the store's address, the driver comes from the
 * container's .lockstep.json.
 */
async function runContainer(driver: string, dir: string, prefix: string): Promise<Row> {
  const kind = driver.slice('container-'.length) as ContainerDriver;
  const owned: Owned[] = [];
  let store: Store | undefined;
  try {
    const env: Record<string, string> = { LOCKSTEP_PREFIX: prefix };
    if (kind === 'file') env.LOCKSTEP_PATH = storeFolder(dir, owned);
    else if (kind === 'sqlite') {
      const f = storeFolder(dir, owned);
      fs.mkdirSync(f, { recursive: true });
      env.LOCKSTEP_DATABASE_URL = `sqlite://${path.join(f, 'locks.db')}`;
    } else if (kind === 'redis' || kind === 'etcd' || kind === 'mariadb' || kind === 'postgres') {
      store = await openStore(kind, dir, prefix, owned);
      for (const name of ['LOCKSTEP_REDIS_URL', 'LOCKSTEP_DATABASE_URL', 'LOCKSTEP_ETCD_ENDPOINTS'])
        if (store.env[name] !== undefined) env[name] = store.env[name];
    } else if (kind === 'git') env.LOCKSTEP_GIT_TIMEOUT_SECONDS = String(GIT_TIMEOUT_SECONDS);
    else
      throw new Error(
        `unknown driver ${driver}: container-file, container-sqlite, container-git, container-redis, container-etcd, container-mariadb or container-postgres`,
      );
    const slowed = {
      install: (bare: string, chained: string) => slowPreReceive(bare, chained, GIT_TIMEOUT_SECONDS),
      describe: `pre-receive slowed (1 push in 8 past the ${GIT_TIMEOUT_SECONDS} s git timeout)`,
    };
    // etcd: the cluster's own faults (leader kills, pauses) run beside the clones' kills for the whole run (not its set-up).
    const storeFaults: Record<string, number> = {};
    const faults = kind === 'etcd' ? store?.faults : undefined;
    const row = await runContainerChaos({
      driver: kind,
      dir,
      env,
      clones: CLONES,
      ms: perDriverMs,
      extend: EXTEND,
      ...(kind === 'git' ? { slowPreReceive: slowed } : {}),
      ...(faults
        ? {
            storeFaults: until =>
              faults(until, what => {
                storeFaults[what] = (storeFaults[what] ?? 0) + 1;
              }),
          }
        : {}),
    });
    const clusterFaults = Object.entries(storeFaults).map(([what, n]) => `${n} ${what}`);
    return {
      summary: row.summary,
      driver,
      seconds: row.seconds,
      sections: row.sections,
      kills: row.kills,
      killedHolders: 0,
      overran: 0,
      longestBlockMs: 0,
      faults: clusterFaults.length > 0 ? clusterFaults.join(', ') : row.faults,
      errors: row.errors,
      violations: row.violations,
      settling: row.settling,
    };
  } finally {
    await store?.close();
    for (const o of owned) await o.release();
    if (!process.env.CHAOS_KEEP) removeMade(dir);
  }
}

/** The worker as one plain script (no TypeScript loader per start: a restart costs a Node start, not a compile). */
function bundleWorker(dir: string): string {
  // Beside the project's node_modules, so that the packages left outside the bundle resolve as they do for tsx.
  const outfile = path.join(ROOT, 'node_modules', '.cache', 'lockstep-chaos', `${path.basename(dir)}.js`);
  buildSync({
    entryPoints: [path.join(ROOT, 'chaos/leaseWorker.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
    // etcd3 reads its .proto files beside its own code: left outside, it loads from node_modules.
    external: ['better-sqlite3', 'pg-native', 'cpu-features', 'ioredis', 'etcd3', 'pg', 'mysql2', 'mysql2/promise', 'simple-git'],
  });
  return outfile;
}

async function runDriver(driver: string): Promise<Row> {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `lockstep-chaos-${driver}-`)));
  const prefix = `chaos-${Math.random().toString(16).slice(2, 10)}`;
  if (driver.startsWith('container-')) return runContainer(driver, dir, prefix);
  const log = path.join(dir, 'sections.jsonl');
  const owned: Owned[] = [];
  let store: Store;
  try {
    store = await openStore(driver, dir, prefix, owned);
  } catch (error) {
    for (const o of owned) await o.release();
    removeMade(dir);
    throw error;
  }
  const faults: Record<string, number> = {};
  // etcd: a write waits for a majority's fsync, and a client finds a new leader only by failing at the old one.
  const slackMs = (driver === 'git' ? 5000 : driver === 'etcd' ? 2500 : 1500) + MAX_RETRY_SLEEP_MS;
  const workers = new Map<number, ChildProcess>();
  // Only a worker that has started racing is killed: killing one still loading its code tests nothing, and on a
  // slow machine a killer faster than start-up leaves a run with no critical section at all.
  const ready = new Set<ChildProcess>();
  const workerJs = bundleWorker(dir);
  const startWorker = (slot: number) => {
    const child = spawn(
      process.execPath,
      [
        workerJs,
        '--names',
        NAMES.join(','),
        '--log',
        log,
        '--ttl',
        String(TTL),
        '--wait',
        '5',
        ...(driver === 'git' ? ['--git-dir', store.cwdOf(slot)] : []),
      ],
      { cwd: store.cwdOf(slot), env: { ...process.env, ...store.env }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    child.stdout?.once('data', () => ready.add(child));
    child.once('exit', () => ready.delete(child));
    workers.set(slot, child);
  };
  try {
    for (let i = 0; i < WORKERS; i++) startWorker(i);
    const began = now();
    let deadline = began + perDriverMs;
    const faulting = store.faults?.(
      () => deadline,
      (what, outage) => {
        faults[what] = (faults[what] ?? 0) + 1;
        if (outage) fs.appendFileSync(log, `${JSON.stringify({ kind: 'outage', pid: 0, ...outage })}\n`);
      },
    );
    let counted = began;
    for (;;) {
      if (SECTIONS !== undefined && now() >= counted + 2000) {
        // the log is read whole: every 2 s is enough
        counted = now();
        if (sectionsSoFar(log) >= SECTIONS) {
          deadline = now();
          break;
        } // the faults end with the slot
      }
      if (now() >= deadline) {
        // a starved slot (a loaded machine: workers still starting) runs on, up to EXTEND times its length
        if (now() >= began + EXTEND * perDriverMs || sectionsSoFar(log) >= sectionFloor(driver)) break;
        deadline += 1000;
      }
      await sleep(rand(50, 500));
      const slot = Math.floor(Math.random() * WORKERS);
      const child = workers.get(slot);
      if (child === undefined || !ready.has(child)) continue;
      if (child.pid !== undefined && child.exitCode === null) {
        fs.appendFileSync(log, `${JSON.stringify({ kind: 'kill', pid: child.pid, at: now() })}\n`);
        child.kill('SIGKILL');
      }
      startWorker(slot);
    }
    await faulting;
    const runEnd = now();
    for (const child of workers.values()) {
      if (child.pid !== undefined && child.exitCode === null) {
        fs.appendFileSync(log, `${JSON.stringify({ kind: 'kill', pid: child.pid, at: now() })}\n`);
        child.kill('SIGKILL');
      }
    }
    await Promise.all(
      [...workers.values()].map(c => (c.exitCode !== null || c.signalCode !== null ? undefined : new Promise(r => c.once('exit', r)))),
    );
    const lines = fs
      .readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(l => JSON.parse(l) as LogLine);
    const verdict = checkLeaseLog(lines, { slackMs, runEnd });
    const violations = [...verdict.violations];
    if (verdict.sections < sectionFloor(driver)) {
      violations.push(
        `only ${verdict.sections} critical sections in ${EXTEND} times the slot (the floor is ${sectionFloor(driver)}): the run proves too little`,
      );
    }
    return {
      driver,
      seconds: (runEnd - began) / 1000,
      sections: verdict.sections,
      kills: verdict.kills,
      killedHolders: verdict.killedHolders,
      overran: verdict.overran,
      longestBlockMs: verdict.longestBlockMs,
      faults:
        Object.entries(faults)
          .map(([k, v]) => `${v} ${k}`)
          .join(', ') || '-',
      errors:
        Object.entries(verdict.errors)
          .map(([k, v]) => `${v} ${k}`)
          .join(', ') || '-',
      violations,
    };
  } finally {
    await store.close();
    for (const o of owned) await o.release();
    if (!process.env.CHAOS_KEEP) removeMade(dir); // the folder it made, and only that
    fs.rmSync(workerJs, { force: true });
  }
}

async function main(): Promise<number> {
  const containers = DRIVERS.filter(d => d.startsWith('container-')).length;
  const what = [
    ...(containers < DRIVERS.length ? [`plain leases, ${WORKERS} workers, ${NAMES.length} names, TTL ${TTL} s`] : []),
    ...(containers > 0 ? [`the container protocol, ${CLONES} clones`] : []),
  ].join('; ');
  console.log(
    `chaos: ${what}, ${(perDriverMs / 1000).toFixed(0)} s per driver${SECTIONS === undefined ? '' : ` or ${SECTIONS} critical sections, whichever comes first`}: ${DRIVERS.join(', ')}`,
  );
  const print = (row: Row) => {
    if (row.summary) console.log(`           ${row.summary}`);
    console.log(
      `  ${row.driver.padEnd(8)} ${row.seconds.toFixed(0).padStart(4)} s ${String(row.sections).padStart(8)} critical sections ${String(row.kills).padStart(5)} kills ` +
        `${String(row.killedHolders).padStart(4)} killed in lease (longest block ${row.longestBlockMs.toFixed(0)} ms)  ${row.overran} ran past their lease  faults: ${row.faults}  errors: ${row.errors}  ` +
        `violations: ${row.violations.length}`,
    );
    if (row.settling) console.log(`           ${row.settling}`);
    for (const v of row.violations.slice(0, 10)) console.log(`      VIOLATION: ${v}`);
  };
  // --parallel: a plain-lease slot keeps the machine to itself (16 workers racing, kills every 50–500 ms), but a
  // container slot spends most of its time waiting (a killed lead's 60 s lease must run out before anyone takes
  // over), so the container slots run side by side, each with its own store, clones and folder, and are printed
  // in the order asked once all have ended. Each keeps its own floor (a grant and a landing, extended up to EXTEND
  // times its length), so a slot starved by its neighbours runs on rather than passes with less.
  const rows: Row[] = [];
  const plain = values.parallel ? DRIVERS.filter(d => !d.startsWith('container-')) : DRIVERS;
  for (const driver of plain) {
    const row = await runDriver(driver);
    rows.push(row);
    print(row);
  }
  if (values.parallel) {
    // Every slot ends (and removes what it made) before a failed one's error is thrown.
    const side = await Promise.allSettled(DRIVERS.filter(d => d.startsWith('container-')).map(d => runDriver(d)));
    for (const got of side) {
      if (got.status === 'rejected') throw got.reason;
      rows.push(got.value);
      print(got.value);
    }
  }
  const bad = rows.reduce((n, r) => n + r.violations.length, 0);
  if (process.env.LOCKSTEP_TALLY) {
    // one tally line (scripts/accounting.sh): a driver is a test, passed with 0 violations
    const failed = rows.filter(r => r.violations.length > 0).length;
    // The note names each failed driver and its first violation, so the summary table says what broke.
    const note = rows
      .filter(r => r.violations.length > 0)
      .map(r => `${r.driver}: ${r.violations.length} violations, first: ${r.violations[0]}`)
      .join('; ');
    // A behaviour is what a run proves, not where: plain leases under faults on every driver are one behaviour (the
    // SQL servers' chaos run included), the container protocol under faults another.
    const behaviours = [
      ...new Set(
        rows.map(r =>
          behaviourKey(['chaos', r.driver.startsWith('container-') ? 'the container protocol under faults' : 'plain leases under faults']),
        ),
      ),
    ].sort();
    fs.appendFileSync(
      process.env.LOCKSTEP_TALLY,
      `${JSON.stringify({ suite: process.env.LOCKSTEP_SUITE || 'chaos', passed: rows.length - failed, failed, skipped: 0, behaviours, ...(note ? { note } : {}) })}\n`,
    );
  }
  console.log(bad === 0 ? 'chaos: 0 violations' : `chaos: ${bad} violations`);
  return bad === 0 ? 0 : 1;
}

main().then(
  code => {
    process.exitCode = code;
  },
  error => {
    console.error(`chaos: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = error instanceof ForeignStoreError ? 3 : 2; // 3: refused a store it did not create
  },
);
