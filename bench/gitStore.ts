/**
 * The git driver on a local bare remote (a path remote: every round trip is a real git process
 * pair — fetch/push/ls-remote here, upload-pack/receive-pack on the remote side — but no network),
 * with the file driver on the same machine as the peer, in ONE run:
 *
 *  - read, unchanged ref          the common case (status, heartbeats' read half)
 *  - read, after another clone's write   the read a lost race is followed by
 *  - the rejected read strategy "ls-remote, then fetch only when moved", for comparison
 *  - compareAndSwap (one write, no contention), lease claim + release, lease extend (heartbeat)
 *  - one watch poll (ls-remote of one ref)
 *
 * Per operation: p50/p99 latency, git processes spawned locally, and round trips to the remote
 * (fetch, push and ls-remote each are one). Lockstep's driver is called directly (no manager).
 *
 *   npm run bench -- gitStore     (or: node --import tsx bench/gitStore.ts)
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Driver } from '../src/core/stores/store';
import { createFileDriver } from '../src/core/stores/file';
import { createGitDriver } from '../src/core/stores/git/gitDriver';
import { GitRunner } from '../src/core/git/runner';
import { GitRefs, lockRef } from '../src/core/stores/git/gitRefs';
import { summaryRow, times, verdict } from './summary';

const OPS = Number(process.env.BENCH_GIT_OPS ?? 40);
const WARMUP = 3;
const NETWORK = new Set(['fetch', 'push', 'ls-remote']);
const PREFIX = 'bench';

interface Row {
  op: string;
  p50: number;
  p99: number;
  processes: number;
  roundTrips: number;
  peer?: number;
}

/** git's empty tree, for the floor's commits. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
let transitionRatio = Number.NaN;

function gitAsync(dir: string, ...args: string[]): Promise<void> {
  return new Promise((resolve, reject) => execFile('git', ['-C', dir, ...args], error => (error ? reject(error) : resolve())));
}

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-bench-git-')));
const spawned: string[] = [];

function git(dir: string, ...args: string[]): void {
  execFileSync('git', ['-C', dir, ...args], { stdio: 'ignore' });
}

function clone(name: string): string {
  const dir = path.join(root, name);
  execFileSync('git', ['clone', '--quiet', path.join(root, 'remote.git'), dir], { stdio: 'ignore' });
  git(dir, 'config', 'user.name', name);
  git(dir, 'config', 'user.email', `${name}@example.invalid`);
  return dir;
}

function openGit(dir: string, count: boolean): ReturnType<typeof createGitDriver> {
  return createGitDriver(
    { gitDir: dir, gitRemote: 'origin', prefix: PREFIX, gitTimeoutMs: 30_000 },
    count ? { onGitSpawn: s => spawned.push(s) } : {},
  );
}

/** Times `op` OPS times (after a warm-up); `before` runs untimed and uncounted before each call. */
async function measure(op: string, run: () => Promise<unknown>, before?: () => Promise<unknown>): Promise<Row> {
  for (let i = 0; i < WARMUP; i++) {
    await before?.();
    await run();
  }
  const times: number[] = [];
  let processes = 0;
  let roundTrips = 0;
  for (let i = 0; i < OPS; i++) {
    await before?.();
    spawned.length = 0;
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
    processes += spawned.length;
    roundTrips += spawned.filter(s => NETWORK.has(s)).length;
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)];
  return { op, p50: at(0.5), p99: at(0.99), processes: processes / OPS, roundTrips: roundTrips / OPS };
}

async function main(): Promise<void> {
  execFileSync('git', ['init', '--quiet', '--bare', path.join(root, 'remote.git')]);
  const [dirA, dirB] = [clone('a'), clone('b')];
  const a = openGit(dirA, true);
  const b = openGit(dirB, false);
  const file: Driver = createFileDriver({ path: path.join(root, 'file-store'), prefix: PREFIX });
  const key = randomBytes(32).toString('hex');
  const rows: Row[] = [];
  const peers = new Map<string, number>();

  try {
    // Peer: the file driver, same operations.
    const fileKey = randomBytes(32).toString('hex');
    let fileRev = ((await file.compareAndSwap(fileKey, null, { n: 0 }, { summary: 'create' })) as { revision: string }).revision;
    peers.set('read', (await measure('file read', () => file.read(fileKey))).p50);
    peers.set(
      'cas',
      (
        await measure('file cas', async () => {
          const w = await file.compareAndSwap(fileKey, fileRev, { n: 1 }, { summary: 'bench' });
          if (!w.ok) throw new Error('file cas lost');
          fileRev = w.revision;
        })
      ).p50,
    );
    const fileOwner = randomBytes(32).toString('hex');
    peers.set(
      'lease',
      (
        await measure('file lease', async () => {
          if (!(await file.claim(fileKey, fileOwner, 30_000, Date.now())).claimed) throw new Error('file claim failed');
          if ((await file.release(fileKey, fileOwner, Date.now())) !== 'released') throw new Error('file release failed');
        })
      ).p50,
    );
    spawned.length = 0;

    // The git driver.
    let revision = ((await a.compareAndSwap(key, null, { n: 0 }, { summary: 'create' })) as { revision: string }).revision;
    await a.read(key);
    rows.push({ ...(await measure('read, unchanged ref', () => a.read(key))), peer: peers.get('read') });

    let n = 0;
    rows.push({
      ...(await measure(
        'read, after another clone wrote',
        () => a.read(key),
        async () => {
          const current = await b.read(key);
          const w = await b.compareAndSwap(key, current!.revision, { n: ++n }, { summary: `b ${n}` });
          if (!w.ok) throw new Error('b lost');
        },
      )),
      peer: peers.get('read'),
    });

    // The alternative read strategy, built from the same plumbing (not what the driver does).
    const refs = new GitRefs(new GitRunner({ gitDir: dirA, timeoutMs: 30_000, onSpawn: s => spawned.push(s) }), 'origin');
    const ref = lockRef(PREFIX, 'records', key);
    const lsThenFetch = async () => {
      const head = (await refs.lsRemote([ref])).get(ref);
      const cat = hasObject(dirA, head!);
      if (!cat) {
        await refs.fetch(ref);
        hasObject(dirA, head!);
      }
    };
    rows.push(await measure('  alt: ls-remote, fetch if moved (unchanged)', lsThenFetch));
    rows.push(
      await measure('  alt: ls-remote, fetch if moved (after a write)', lsThenFetch, async () => {
        const current = await b.read(key);
        await b.compareAndSwap(key, current!.revision, { n: ++n }, { summary: `b ${n}` });
      }),
    );

    revision = (await a.read(key))!.revision;
    rows.push({
      ...(await measure('compareAndSwap (no contention)', async () => {
        const w = await a.compareAndSwap(key, revision, { n: ++n }, { summary: `a ${n}` });
        if (!w.ok) throw new Error('a lost');
        revision = w.revision;
      })),
      peer: peers.get('cas'),
    });

    const leaseKey = randomBytes(32).toString('hex');
    const owner = randomBytes(32).toString('hex');
    rows.push({
      ...(await measure('lease claim + release', async () => {
        if (!(await a.claim(leaseKey, owner, 30_000, Date.now())).claimed) throw new Error('claim failed');
        if ((await a.release(leaseKey, owner, Date.now())) !== 'released') throw new Error('release failed');
      })),
      peer: peers.get('lease'),
    });
    if (!(await a.claim(leaseKey, owner, 30_000, Date.now())).claimed) throw new Error('claim failed');
    rows.push(
      await measure('lease extend (heartbeat)', async () => {
        if (!(await a.extend(leaseKey, owner, 30_000, Date.now()))) throw new Error('extend failed');
      }),
    );
    rows.push(await measure('watch poll (ls-remote, 1 ref)', () => refs.lsRemote([ref])));

    // The floor of one transition: plain git, one fetch and one push --force-with-lease of one ref
    // (the next commit is made untimed beforehand).
    const floorRef = 'refs/bench/floor';
    let floorHead = execFileSync('git', ['-C', dirA, 'commit-tree', '-m', 'floor 0', EMPTY_TREE], { encoding: 'utf8' }).trim();
    git(dirA, 'push', '--quiet', 'origin', `${floorHead}:${floorRef}`);
    let nextCommit = '';
    const floor = await measure(
      'floor: git fetch + git push --force-with-lease, one ref',
      async () => {
        await gitAsync(dirA, 'fetch', '--quiet', 'origin', `+${floorRef}:${floorRef}`);
        await gitAsync(dirA, 'push', '--quiet', `--force-with-lease=${floorRef}:${floorHead}`, 'origin', `${nextCommit}:${floorRef}`);
        floorHead = nextCommit;
      },
      async () => {
        nextCommit = execFileSync('git', ['-C', dirA, 'commit-tree', '-p', floorHead, '-m', `floor ${++n}`, EMPTY_TREE], {
          encoding: 'utf8',
        }).trim();
      },
    );
    rows.push({ ...floor, processes: 2, roundTrips: 2 });
    const cas = rows.find(r => r.op === 'compareAndSwap (no contention)')!;
    transitionRatio = cas.p50 / floor.p50;
  } finally {
    await a.close();
    await b.close();
    await file.close();
    fs.rmSync(root, { recursive: true, force: true });
  }

  console.log(
    `git driver on a local bare remote, ${OPS} operations each after ${WARMUP} warm-up; git ${gitVersion()}, node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}`,
  );
  console.log('| operation | p50 ms | p99 ms | git processes / op | round trips / op | file driver p50 ms | git / file |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const r of rows) {
    const peer = r.peer === undefined ? '' : r.peer.toFixed(2);
    const ratio = r.peer === undefined ? '' : `${(r.p50 / r.peer).toFixed(0)}×`;
    console.log(
      `| ${r.op} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.processes.toFixed(1)} | ${r.roundTrips.toFixed(1)} | ${peer} | ${ratio} |`,
    );
  }
  console.log(
    `target: one transition (the driver's compare-and-swap; a CLI command adds Node's start) ≤ 1.3× the plain-git floor: ${transitionRatio <= 1.3 ? 'met' : 'NOT met'} (${transitionRatio.toFixed(2)}×)`,
  );
  const cas = rows.find(r => r.op === 'compareAndSwap (no contention)')!;
  const floor = rows.find(r => r.op.startsWith('floor: '))!;
  const count = (n: number, one: string, many: string) => `${Number.isInteger(n) ? n : n.toFixed(1)} ${n === 1 ? one : many}`;
  summaryRow({
    bench: 'gitStore',
    what: 'one compare-and-swap (a transition) on a local bare remote',
    lockstep: `${cas.p50.toFixed(1)} ms (p50 of ${OPS}; ${count(cas.processes, 'git process', 'git processes')}, ${count(cas.roundTrips, 'round trip', 'round trips')})`,
    baseline: `plain \`git fetch\` + \`git push --force-with-lease\` of one ref ${floor.p50.toFixed(1)} ms: **${times(transitionRatio)}**`,
    target: `≤ 1.3× (a command adds Node's start): ${verdict(transitionRatio <= 1.3)}`,
  });
}

/** `git cat-file -e <sha>` (one local process, counted): true when the clone has the object. */
function hasObject(dir: string, sha: string): boolean {
  spawned.push('cat-file');
  try {
    execFileSync('git', ['-C', dir, 'cat-file', '-e', sha], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function gitVersion(): string {
  return execFileSync('git', ['--version'], { encoding: 'utf8' })
    .trim()
    .replace(/^git version /, '');
}

main().catch(error => {
  console.error(error);
  process.exitCode = 1;
});
