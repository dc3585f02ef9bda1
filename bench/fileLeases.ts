/**
 * The file driver's acquire + release against npm `proper-lockfile` (lock + unlock) and the raw
 * floor (open(O_CREAT|O_EXCL) + close + unlink), in ONE run, on this machine's temp filesystem:
 *
 *  1. sequential: one process, one name, acquire/release back to back;
 *  2. contention: 4 processes on one name, each proving exclusivity inside (an O_EXCL marker);
 *  3. starvation: 8 clients in one process, then 8 clients in 4 processes (2 each), each looping
 *     tryAcquire (no wait) → a critical section with one TCP round trip to an echo server in its own
 *     process → release, for a fixed time; acquisitions per second and the least any client got.
 *
 * Fairness notes (printed with the table): proper-lockfile runs with `realpath: false` (no
 * realpath(3) per call; its default would add one) and its default `stale`/`update` settings;
 * Lockstep runs through its public API (`createLockManager` → `acquire` → `release`) with the
 * file driver; the floor uses synchronous fs calls, nothing else. Under contention every contender
 * retries after 5–25 ms random sleeps (Lockstep's own cadence; proper-lockfile via its `retries`
 * option with randomised 5–25 ms timeouts; the floor with setTimeout).
 *
 *   npm run bench -- fileLeases     (or: node --import tsx bench/fileLeases.ts)
 *
 * Environment: BENCH_DIR (base folder, default the OS temp folder — e.g. /dev/shm to take the disk
 * out of the comparison), BENCH_SEQUENTIAL_OPS, BENCH_CONTENTION_OPS, BENCH_SKIP_CONTENTION=1,
 * BENCH_STARVE_SECONDS (default 3).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import lockfile from 'proper-lockfile';
import { createLockManager } from '../src/core/leases';
import { fmt, summaryRow, times, verdict } from './summary';

type Contender = 'lockstep' | 'proper-lockfile' | 'floor';
const CONTENDERS: Contender[] = ['lockstep', 'proper-lockfile', 'floor'];
const SEQUENTIAL_OPS = Number(process.env.BENCH_SEQUENTIAL_OPS ?? 3000);
const WARMUP_OPS = 300;
const CONTENTION_PROCESSES = 4;
const CONTENTION_OPS_PER_PROCESS = Number(process.env.BENCH_CONTENTION_OPS ?? 150);
const SKIP_CONTENTION = process.env.BENCH_SKIP_CONTENTION === '1';
const BASE_DIR = process.env.BENCH_DIR ?? os.tmpdir();
const STARVE_SECONDS = Number(process.env.BENCH_STARVE_SECONDS ?? 3);

interface Lock {
  acquire(): Promise<void>;
  release(): Promise<void>;
  close(): Promise<void>;
}

/** One contender's acquire/release on `dir`, waiting (with 5–25 ms retries) when `wait` is set. */
function openLock(kind: Contender, dir: string, wait: boolean): Lock {
  const target = path.join(dir, 'resource');
  switch (kind) {
    case 'lockstep': {
      const manager = createLockManager({
        env: { LOCKSTEP_DRIVER: 'file', LOCKSTEP_PATH: path.join(dir, 'store'), LOCKSTEP_PREFIX: 'bench' },
      });
      let handle: Awaited<ReturnType<typeof manager.acquire>> | undefined;
      return {
        async acquire() {
          handle = await manager.acquire('bench-name', { ttl: 30, wait: wait ? 60 : 0 });
          if (!handle.acquired) throw new Error('lockstep: not acquired');
        },
        async release() {
          if (!(await handle!.release())) throw new Error('lockstep: release returned false');
        },
        close: () => manager.close(),
      };
    }
    case 'proper-lockfile': {
      let unlock: (() => Promise<void>) | undefined;
      const options = {
        realpath: false,
        retries: wait ? { retries: 100_000, minTimeout: 5, maxTimeout: 25, factor: 1, randomize: true } : 0,
      };
      return {
        async acquire() {
          unlock = await lockfile.lock(target, options);
        },
        async release() {
          await unlock!();
        },
        close: async () => undefined,
      };
    }
    case 'floor': {
      const marker = `${target}.floor`;
      return {
        async acquire() {
          for (;;) {
            try {
              fs.closeSync(fs.openSync(marker, 'wx'));
              return;
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !wait) throw error;
            }
            await new Promise(resolve => setTimeout(resolve, 5 + Math.random() * 20));
          }
        },
        async release() {
          fs.unlinkSync(marker);
        },
        close: async () => undefined,
      };
    }
  }
}

interface Stats {
  ops: number;
  seconds: number;
  p50: number;
  p99: number;
}

function stats(latenciesMs: number[], seconds: number): Stats {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { ops: sorted.length, seconds, p50: at(0.5), p99: at(0.99) };
}

async function sequential(kind: Contender, dir: string): Promise<Stats> {
  const lock = openLock(kind, dir, false);
  try {
    for (let i = 0; i < WARMUP_OPS; i++) {
      await lock.acquire();
      await lock.release();
    }
    const latencies: number[] = [];
    const start = performance.now();
    for (let i = 0; i < SEQUENTIAL_OPS; i++) {
      const t = performance.now();
      await lock.acquire();
      await lock.release();
      latencies.push(performance.now() - t);
    }
    return stats(latencies, (performance.now() - start) / 1000);
  } finally {
    await lock.close();
  }
}

interface WorkerResult {
  latencies: number[];
  violations: number;
  start: number;
  end: number;
}

/** Worker process: waits for the gate, then runs its share of contended acquire/release. */
async function worker(kind: Contender, dir: string, ops: number): Promise<void> {
  const lock = openLock(kind, dir, true);
  const gate = path.join(dir, 'go');
  fs.writeFileSync(path.join(dir, `ready-${process.pid}`), '');
  while (!fs.existsSync(gate)) await new Promise(resolve => setTimeout(resolve, 5));
  const inside = path.join(dir, 'inside');
  const result: WorkerResult = { latencies: [], violations: 0, start: Date.now(), end: 0 };
  for (let i = 0; i < ops; i++) {
    const t = performance.now();
    await lock.acquire();
    let mine = false;
    try {
      fs.closeSync(fs.openSync(inside, 'wx'));
      mine = true;
    } catch {
      result.violations++;
    }
    await new Promise(resolve => setImmediate(resolve)); // let a violator show itself
    if (mine) fs.unlinkSync(inside);
    await lock.release();
    result.latencies.push(performance.now() - t);
  }
  result.end = Date.now();
  await lock.close();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function contention(kind: Contender, dir: string): Promise<Stats & { violations: number }> {
  const children = Array.from({ length: CONTENTION_PROCESSES }, () => {
    const child = spawn(process.execPath, ['--import', 'tsx', __filename, '--worker', kind, dir, String(CONTENTION_OPS_PER_PROCESS)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
    });
    return new Promise<WorkerResult>((resolve, reject) =>
      child.on('close', code => {
        if (code !== 0) reject(new Error(`${kind} worker exited ${code}`));
        else resolve(JSON.parse(out) as WorkerResult);
      }),
    );
  });
  // Open the gate once every worker is ready, so that they really contend.
  while (fs.readdirSync(dir).filter(f => f.startsWith('ready-')).length < CONTENTION_PROCESSES) {
    await new Promise(resolve => setTimeout(resolve, 10));
  }
  fs.writeFileSync(path.join(dir, 'go'), '');
  const results = await Promise.all(children);
  const seconds = (Math.max(...results.map(r => r.end)) - Math.min(...results.map(r => r.start))) / 1000;
  return {
    ...stats(
      results.flatMap(r => r.latencies),
      seconds,
    ),
    violations: results.reduce((s, r) => s + r.violations, 0),
  };
}

/**
 * Starvation worker: `clients` clients in this process loop tryAcquire → one TCP round trip to an
 * echo server of this process → release, for STARVE_SECONDS after the gate opens. Prints each
 * client's acquisitions and the overlaps seen.
 */
async function starveWorker(kind: Contender, dir: string, clients: number): Promise<void> {
  const server = net.createServer(socket => socket.pipe(socket));
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const locks = Array.from({ length: clients }, () => openLock(kind, dir, false));
  const sockets = await Promise.all(
    locks.map(
      () =>
        new Promise<net.Socket>(resolve => {
          const s = net.connect(port, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  fs.writeFileSync(path.join(dir, `ready-${process.pid}`), '');
  while (!fs.existsSync(path.join(dir, 'go'))) await new Promise(resolve => setTimeout(resolve, 5));
  const end = performance.now() + STARVE_SECONDS * 1000;
  const inside = path.join(dir, 'inside');
  const counts = new Array<number>(clients).fill(0);
  let violations = 0;
  await Promise.all(
    locks.map(async (lock, i) => {
      while (performance.now() < end) {
        try {
          await lock.acquire();
        } catch {
          continue;
        }
        let mine = false;
        try {
          fs.closeSync(fs.openSync(inside, 'wx'));
          mine = true;
        } catch {
          violations++;
        }
        await new Promise<void>(resolve => {
          sockets[i].once('data', () => resolve());
          sockets[i].write('x');
        });
        if (mine) fs.unlinkSync(inside);
        await lock.release();
        counts[i]++;
      }
    }),
  );
  for (const socket of sockets) socket.destroy();
  server.close();
  await Promise.all(locks.map(lock => lock.close()));
  process.stdout.write(`${JSON.stringify({ counts, violations })}\n`);
}

interface Starved {
  perSecond: number;
  least: number;
  clients: number;
  violations: number;
}

async function starvation(kind: Contender, dir: string, processes: number, clientsEach: number): Promise<Starved> {
  const children = Array.from({ length: processes }, () => {
    const child = spawn(process.execPath, ['--import', 'tsx', __filename, '--starve-worker', kind, dir, String(clientsEach)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
    });
    return new Promise<{ counts: number[]; violations: number }>((resolve, reject) =>
      child.on('close', code => {
        if (code !== 0) reject(new Error(`${kind} starvation worker exited ${code}`));
        else resolve(JSON.parse(out));
      }),
    );
  });
  while (fs.readdirSync(dir).filter(f => f.startsWith('ready-')).length < processes) await new Promise(resolve => setTimeout(resolve, 10));
  fs.writeFileSync(path.join(dir, 'go'), '');
  const results = await Promise.all(children);
  const counts = results.flatMap(r => r.counts);
  return {
    perSecond: counts.reduce((a, b) => a + b, 0) / STARVE_SECONDS,
    least: Math.min(...counts),
    clients: counts.length,
    violations: results.reduce((a, r) => a + r.violations, 0),
  };
}

/** The run-wide summary's rows (bench/summary.ts), one per README row, from the figures measured above. */
function summarize(
  seq: Record<string, Stats>,
  con: Record<string, Stats & { violations: number }>,
  starved: Record<string, Starved>,
): void {
  const bench = 'fileLeases';
  const rate = (s: Stats) => s.ops / s.seconds;
  const overlaps = (n: number) => (n > 0 ? `, **${n} overlaps: OVERLAP DETECTED**` : '');
  const sequential = rate(seq.lockstep) / rate(seq['proper-lockfile']);
  summaryRow({
    bench,
    what: 'acquire+release, one process',
    lockstep: `${fmt(rate(seq.lockstep))} ops/s`,
    baseline: `proper-lockfile ${fmt(rate(seq['proper-lockfile']))} ops/s (default \`stale\` and \`update\`, \`realpath: false\`): **${times(sequential)}**; \`open(wx)\`+\`unlink\` floor ${fmt(rate(seq.floor))}`,
    target: `≥ 2× (aim 3×): ${sequential >= 3 ? '**met the aim**' : verdict(sequential >= 2)}`,
  });
  const starveWhat = (clients: number, processes: number) =>
    processes === 1
      ? `${clients} clients in one process looping tryAcquire → one TCP round trip → release`
      : `the same, ${clients} clients in ${processes} processes`;
  if (SKIP_CONTENTION) {
    const skipped = { lockstep: 'SKIPPED (BENCH_SKIP_CONTENTION=1: not run)', baseline: '—' };
    summaryRow({ bench, what: `${CONTENTION_PROCESSES} contending processes`, ...skipped, target: '≥ 10×: SKIPPED' });
    for (const processes of [1, 4]) {
      summaryRow({ bench, what: starveWhat(8, processes), ...skipped, target: '≥ 2× and every client acquires: SKIPPED' });
    }
    return;
  }
  const contended = rate(con.lockstep) / rate(con['proper-lockfile']);
  summaryRow({
    bench,
    what: `${CONTENTION_PROCESSES} contending processes`,
    lockstep: `${fmt(rate(con.lockstep))} ops/s, ${con.lockstep.violations} overlaps`,
    baseline: `proper-lockfile ${fmt(rate(con['proper-lockfile']))} ops/s: **${times(contended)}**`,
    target: `≥ 10×: ${verdict(contended >= 10)}`,
  });
  for (const processes of [1, 4]) {
    const l = starved[`${processes}:lockstep`];
    const p = starved[`${processes}:proper-lockfile`];
    const r = l.perSecond / p.perSecond;
    summaryRow({
      bench,
      what: starveWhat(l.clients, processes),
      lockstep: `${fmt(l.perSecond)} acquisitions/s, ${l.least > 0 ? 'every client acquired' : 'a client never acquired'} (least ${l.least})${overlaps(l.violations)}`,
      baseline: `proper-lockfile ${fmt(p.perSecond)}/s: **${times(r)}**`,
      target: `≥ 2× and every client acquires: ${verdict(r >= 2 && l.least > 0)}`,
    });
  }
}

async function main(): Promise<void> {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(BASE_DIR, 'lockstep-bench-')));
  try {
    const seq: Record<string, Stats> = {};
    const con: Record<string, Stats & { violations: number }> = {};
    for (const kind of CONTENDERS) {
      fs.mkdirSync(path.join(root, `seq-${kind}`));
      seq[kind] = await sequential(kind, path.join(root, `seq-${kind}`));
    }
    for (const kind of SKIP_CONTENTION ? [] : CONTENDERS) {
      fs.mkdirSync(path.join(root, `con-${kind}`));
      con[kind] = await contention(kind, path.join(root, `con-${kind}`));
    }
    const starved: Record<string, Starved> = {};
    for (const [processes, clientsEach] of SKIP_CONTENTION
      ? []
      : [
          [1, 8],
          [4, 2],
        ]) {
      for (const kind of ['lockstep', 'proper-lockfile'] as Contender[]) {
        const dir = path.join(root, `starve-${processes}-${kind}`);
        fs.mkdirSync(dir);
        starved[`${processes}:${kind}`] = await starvation(kind, dir, processes, clientsEach);
      }
    }
    const none = { ops: 0, seconds: 1, p50: Number.NaN, p99: Number.NaN, violations: 0 };
    for (const kind of CONTENDERS) con[kind] ??= none;
    console.log(
      `file leases — Node ${process.version}, ${os.cpus().length} CPUs, load ${os
        .loadavg()
        .map(l => l.toFixed(1))
        .join(' ')}, ${os.platform()} ${os.release()}, folder ${BASE_DIR}`,
    );
    console.log(
      `sequential: ${SEQUENTIAL_OPS} acquire+release after ${WARMUP_OPS} warm-up; contention: ${CONTENTION_PROCESSES} processes × ${CONTENTION_OPS_PER_PROCESS}`,
    );
    console.log('');
    console.log('| contender        | sequential ops/s | p50 ms | p99 ms | 4-proc ops/s | p50 ms | p99 ms | overlaps |');
    console.log('|------------------|-----------------:|-------:|-------:|-------------:|-------:|-------:|---------:|');
    for (const kind of CONTENDERS) {
      const s = seq[kind];
      const c = con[kind];
      console.log(
        `| ${kind.padEnd(16)} | ${fmt(s.ops / s.seconds).padStart(16)} | ${fmt(s.p50, 3).padStart(6)} | ${fmt(s.p99, 3).padStart(6)} | ${fmt(c.ops / c.seconds).padStart(12)} | ${fmt(c.p50, 1).padStart(6)} | ${fmt(c.p99, 1).padStart(6)} | ${String(c.violations).padStart(8)} |`,
      );
    }
    const ratio = (a: Contender, b: Contender, r: Record<string, Stats>) => r[a].ops / r[a].seconds / (r[b].ops / r[b].seconds);
    console.log('');
    console.log(`ratios (throughput)        sequential   4-process`);
    console.log(
      `Lockstep / proper-lockfile ${fmt(ratio('lockstep', 'proper-lockfile', seq), 2).padStart(9)}×  ${fmt(ratio('lockstep', 'proper-lockfile', con), 2).padStart(9)}×`,
    );
    console.log(
      `Lockstep / floor           ${fmt(ratio('lockstep', 'floor', seq), 2).padStart(9)}×  ${fmt(ratio('lockstep', 'floor', con), 2).padStart(9)}×`,
    );
    console.log(`p50 latency, proper-lockfile / Lockstep (sequential): ${fmt(seq['proper-lockfile'].p50 / seq.lockstep.p50, 2)}×`);
    console.log('');
    console.log('proper-lockfile: realpath:false, default stale (10 s) and update; contention retries randomised 5–25 ms.');
    console.log('floor: synchronous open(wx)+close+unlink; under contention it retries after 5–25 ms like Lockstep.');
    if (!SKIP_CONTENTION) {
      console.log('');
      console.log(`starvation: clients loop tryAcquire → one TCP round trip → release for ${STARVE_SECONDS} s`);
      console.log(
        '| clients | Lockstep acquisitions/s | least per client | proper-lockfile acquisitions/s | least per client | ratio | overlaps |',
      );
      console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
      for (const processes of [1, 4]) {
        const l = starved[`${processes}:lockstep`];
        const p = starved[`${processes}:proper-lockfile`];
        console.log(
          `| ${l.clients} in ${processes} process${processes > 1 ? 'es' : ''} | ${fmt(l.perSecond)} | ${l.least} | ${fmt(p.perSecond)} | ${p.least} | ${fmt(l.perSecond / p.perSecond, 2)}× | ${l.violations + p.violations} |`,
        );
      }
    }
    console.log('');
    const target = ratio('lockstep', 'proper-lockfile', seq);
    console.log(
      `target ≥2× proper-lockfile sequential (aim 3×): ${target >= 3 ? 'met the aim' : target >= 2 ? 'met' : 'NOT met'} (${fmt(target, 2)}×)`,
    );
    if (!SKIP_CONTENTION) {
      const contended = ratio('lockstep', 'proper-lockfile', con);
      console.log(
        `target ≥10× proper-lockfile with 4 contending processes: ${contended >= 10 ? 'met' : 'NOT met'} (${fmt(contended, 2)}×)`,
      );
      for (const processes of [1, 4]) {
        const l = starved[`${processes}:lockstep`];
        const r = l.perSecond / starved[`${processes}:proper-lockfile`].perSecond;
        console.log(
          `target starvation (${l.clients} clients in ${processes}) ≥2× proper-lockfile and every client acquires: ${r >= 2 && l.least > 0 ? 'met' : 'NOT met'} (${fmt(r, 2)}×, least ${l.least})`,
        );
      }
    }
    summarize(seq, con, starved);
    if (CONTENDERS.some(k => con[k].violations > 0) || Object.values(starved).some(s => s.violations > 0)) {
      console.log('OVERLAP DETECTED');
      process.exitCode = 1;
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 5 });
  }
}

if (process.argv[2] === '--starve-worker') {
  void starveWorker(process.argv[3] as Contender, process.argv[4], Number(process.argv[5])).catch(error => {
    process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
    process.exitCode = 1;
  });
} else if (process.argv[2] === '--worker') {
  void worker(process.argv[3] as Contender, process.argv[4], Number(process.argv[5])).catch(error => {
    process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
    process.exitCode = 1;
  });
} else {
  main().catch(error => {
    console.error(error);
    process.exitCode = 1;
  });
}
