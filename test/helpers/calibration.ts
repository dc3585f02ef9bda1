/**
 * How much slower than an unloaded reference machine this machine runs right now: the one factor by which every
 * real deadline of the tests is scaled (waitFor's, mocha's timeouts through test/helpers/loadScaling.ts, the short
 * leases and windows of the stories that must let real time pass). Tests whose verdict can be freed from time are
 * (an injected clock, a wait for the condition); this is for the deadlines that must remain.
 *
 * The calibration times two fixed workloads, each the median of five tries: a CPU workload (SHA-256 over 40 MiB,
 * in this process) and a spawn (`git --version`, the cheapest of the processes the tests start by the hundred). The
 * factor is the larger of the two ratios to the reference machine, at least 1 and at most MAX_SLOWDOWN.
 *
 * Measured once per run: `scripts/test-all.sh` measures it at the start and exports LOCKSTEP_TEST_SLOWDOWN to
 * every suite; each test process also measures once (on first use) and takes the larger of the two, since the
 * machine may have grown busier since the run began. `npx tsx test/helpers/calibration.ts` prints the factor.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';

/** The reference machine's medians (ms): an unloaded 2-core CI runner. */
export const REFERENCE_CPU_MS = 40;
export const REFERENCE_SPAWN_MS = 10;
/** A factor above this means the machine is not fit to judge timing; deadlines stop growing here. */
export const MAX_SLOWDOWN = 20;
export const SLOWDOWN_ENV = 'LOCKSTEP_TEST_SLOWDOWN';
/**
 * The same factor inside a VS Code host, whose environment keeps only the runner's LOCKSTEP_VSCODE_* variables
 * (test/vscode/harness/codeServer.mjs): the runner passes the run's factor under this name, and the host's test
 * index replaces it with the larger of it and the host's own measurement before the tests load.
 */
export const HOST_SLOWDOWN_ENV = 'LOCKSTEP_VSCODE_TEST_SLOWDOWN';

export interface Calibration {
  readonly cpuMs: number;
  readonly spawnMs: number;
  readonly factor: number;
}

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];

function timeCpu(): number {
  const block = Buffer.alloc(1 << 20, 7);
  const start = performance.now();
  let digest = Buffer.alloc(32);
  for (let i = 0; i < 40; i++) digest = createHash('sha256').update(block).update(digest).digest();
  return performance.now() - start;
}

function timeSpawn(): number {
  const start = performance.now();
  const run = spawnSync('git', ['--version'], { stdio: 'ignore' });
  if (run.error) throw new Error(`calibration: could not start git (${run.error.message}); the tests need git on PATH`);
  return performance.now() - start;
}

/** The factor for two measured medians. */
export function factorFor(cpuMs: number, spawnMs: number): number {
  const raw = Math.max(cpuMs / REFERENCE_CPU_MS, spawnMs / REFERENCE_SPAWN_MS);
  return Math.round(Math.min(MAX_SLOWDOWN, Math.max(1, raw)) * 10) / 10;
}

/** Measures now (about 5 × (CPU workload + one spawn): a fraction of a second on an unloaded machine). */
export function calibrate(): Calibration {
  const cpuMs = median(Array.from({ length: 5 }, timeCpu));
  const spawnMs = median(Array.from({ length: 5 }, timeSpawn));
  return { cpuMs, spawnMs, factor: factorFor(cpuMs, spawnMs) };
}

/** The factor exported by the run (LOCKSTEP_TEST_SLOWDOWN, or HOST_SLOWDOWN_ENV in a VS Code host), if it is a number of at least 1. */
export function exportedSlowdown(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const value = Number(env[SLOWDOWN_ENV] ?? env[HOST_SLOWDOWN_ENV]);
  return Number.isFinite(value) && value >= 1 ? Math.min(MAX_SLOWDOWN, value) : undefined;
}

let measured: number | undefined;

/** This run's factor: the larger of the run's calibration (when exported) and this process's own, measured once. */
export function slowdown(): number {
  if (measured === undefined) measured = calibrate().factor;
  return Math.max(measured, exportedSlowdown() ?? 1);
}

/** `ms` scaled by this run's factor: for every real deadline in the tests. */
export function scaled(ms: number): number {
  return Math.ceil(ms * slowdown());
}

/** Seconds, scaled and rounded up to whole seconds (for settings such as windowSeconds and --ttl). */
export function scaledSeconds(seconds: number): number {
  return Math.ceil(seconds * slowdown());
}

if (require.main === module) {
  const c = calibrate();
  process.stderr.write(
    `calibration: CPU workload ${c.cpuMs.toFixed(0)} ms (reference ${REFERENCE_CPU_MS}), git spawn ${c.spawnMs.toFixed(0)} ms ` +
      `(reference ${REFERENCE_SPAWN_MS}): deadlines × ${c.factor}\n`,
  );
  process.stdout.write(`${c.factor}\n`);
}
