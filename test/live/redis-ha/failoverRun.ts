import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { childEnv, finished, spawnTs } from '../../helpers/children';
import type { FailoverResult } from '../../helpers/failoverWorker';
import { waitFor } from '../../helpers/waitFor';

export const PROCESSES = 8;
/** Short, so that a lease whose release failed during the failover blocks the name only briefly. */
const TTL_SECONDS = 5;
/** Acquisitions before the kill, and after it, before the run stops. */
const BEFORE_KILL = 40;
const AFTER_KILL = 40;

export interface FailoverReport {
  readonly label: string;
  readonly minReplicas: number;
  readonly processes: number;
  readonly acquisitions: number;
  readonly acquisitionsAfterKill: number;
  /** The longest time in which no client acquired: the failover as the clients saw it. */
  readonly failoverMs: number;
  /** Times a process found another inside the critical section: two live leases at once. */
  readonly duplicateLiveLeases: number;
  /** Leases whose release found them gone: lost with the old master while held. */
  readonly leasesLost: number;
  /** Releases that failed (the master was down); such a lease blocks the name until its TTL ends. */
  readonly releasesFailed: number;
  /** In the global acquisition order, tokens not greater than the one before. */
  readonly tokensBackwards: number;
  /** Acquire calls whose wait (5 s) ran out. */
  readonly busy: number;
  readonly backendErrors: number;
  /** Of those, grants refused because too few replicas confirmed them (`reason: replication`). */
  readonly replicationErrors: number;
  readonly otherErrors: number;
}

/**
 * 8 worker processes contend for one lease on `url` while `kill` SIGKILLs the master; the run goes
 * on until `promoted` says a replica took over and AFTER_KILL more acquisitions happened.
 */
export async function contendThroughFailover(options: {
  label: string;
  url: string;
  prefix: string;
  name: string;
  minReplicas: number;
  kill: () => Promise<void>;
  promoted: () => Promise<boolean>;
}): Promise<FailoverReport> {
  const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-failover-'));
  const gate = path.join(shared, 'gate');
  const stop = path.join(shared, 'stop');
  const counter = (): number => {
    try {
      return Number(fs.readFileSync(path.join(shared, 'counter'), 'utf8')) || 0;
    } catch {
      return 0;
    }
  };
  const env = childEnv({
    LOCKSTEP_DRIVER: 'redis',
    LOCKSTEP_REDIS_URL: options.url,
    LOCKSTEP_PREFIX: options.prefix,
    LOCKSTEP_REDIS_MIN_REPLICAS: String(options.minReplicas),
  });
  const outs = Array.from({ length: PROCESSES }, (_, i) => path.join(shared, `result-${i}.json`));
  const runs = outs.map(out =>
    finished(
      spawnTs(
        'test/helpers/failoverWorker.ts',
        ['--name', options.name, '--shared', shared, '--out', out, '--gate', gate, '--stop', stop, '--ttl', String(TTL_SECONDS)],
        env,
      ),
      150_000,
    ),
  );
  try {
    await waitFor(() => fs.readdirSync(shared).filter(f => f.startsWith('gate.ready-')).length === PROCESSES, {
      timeoutMs: 60_000,
      description: 'every worker ready',
    });
    fs.writeFileSync(gate, '');
    await waitFor(() => counter() >= BEFORE_KILL, { timeoutMs: 30_000, description: `${BEFORE_KILL} acquisitions before the kill` });
    const killedAt = Date.now();
    const atKill = counter();
    await options.kill();
    const recovered = await waitFor(async () => (await options.promoted()) && counter() >= atKill + AFTER_KILL, {
      timeoutMs: 60_000,
      intervalMs: 100,
      description: 'a promoted replica and acquisitions after the kill',
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    fs.writeFileSync(stop, '');
    const finishedRuns = await Promise.all(runs);
    for (const run of finishedRuns) if (run.code !== 0) throw new Error(`a worker failed (${run.code}): ${run.stderr.slice(-2000)}`);
    const results = outs.map(out => JSON.parse(fs.readFileSync(out, 'utf8')) as FailoverResult);
    const report = summarise(options.label, options.minReplicas, results, killedAt);
    console.log(`      ${JSON.stringify(report)}`);
    if (recovered) throw new Error(`${String(recovered)}; errors seen: ${JSON.stringify(errorKinds(results))}`);
    return report;
  } finally {
    fs.writeFileSync(stop, '');
    await Promise.allSettled(runs);
    fs.rmSync(shared, { recursive: true, force: true });
  }
}

function summarise(label: string, minReplicas: number, results: FailoverResult[], killedAt: number): FailoverReport {
  const entries = results.flatMap(r => r.entries).sort((a, b) => a.seq - b.seq);
  let backwards = 0;
  for (let i = 1; i < entries.length; i++) if (entries[i]!.fencingToken <= entries[i - 1]!.fencingToken) backwards++;
  const after = entries.filter(e => e.at >= killedAt);
  const errors = results.flatMap(r => r.errors);
  const backend = errors.filter(e => e.code === 'backend');
  return {
    label,
    minReplicas,
    processes: results.length,
    acquisitions: entries.length,
    acquisitionsAfterKill: after.length,
    failoverMs: longestGap(entries.map(e => e.at)),
    duplicateLiveLeases: results.reduce((n, r) => n + r.violations, 0),
    leasesLost: entries.filter(e => e.release === 'gone').length,
    releasesFailed: entries.filter(e => e.release === 'failed').length,
    tokensBackwards: backwards,
    busy: results.reduce((n, r) => n + r.busy, 0),
    backendErrors: backend.length,
    replicationErrors: backend.filter(e => e.reason === 'replication').length,
    otherErrors: errors.length - backend.length,
  };
}

function longestGap(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let longest = 0;
  for (let i = 1; i < sorted.length; i++) longest = Math.max(longest, sorted[i]! - sorted[i - 1]!);
  return longest;
}

/** The distinct errors the workers saw, with counts (for a failed run's message). */
function errorKinds(results: FailoverResult[]): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const e of results.flatMap(r => r.errors)) {
    const k = `${e.name}: ${e.message.slice(0, 60)}`;
    kinds[k] = (kinds[k] ?? 0) + 1;
  }
  return kinds;
}
