import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTempDir, removeTempDir } from './tempDir';

/** The Promela model of the container protocol (issue 15). */
export const MODEL = path.resolve(__dirname, '../../model/lockstep.pml');

/** The spin executable (LOCKSTEP_SPIN, else spin on PATH), or undefined when there is none (or no C compiler). */
export function findSpin(): string | undefined {
  const spin = process.env.LOCKSTEP_SPIN || 'spin';
  const runs = (cmd: string, args: string[]) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
  return runs(spin, ['-V']) && runs('cc', ['--version']) ? spin : undefined;
}

export interface Verification {
  readonly errors: number;
  readonly states: number;
  /** pan's report, for the failure message. */
  readonly report: string;
  /** The first assertion or claim pan says was violated, if any. */
  readonly violated?: string;
}

/**
 * Generates the verifier for MODEL with `defines` (spin -D…), compiles it with `cflags` and runs it
 * with `panFlags`, in a private folder that is removed afterwards.
 */
export function verify(spin: string, defines: readonly string[], cflags: readonly string[], panFlags: readonly string[]): Verification {
  const dir = makeTempDir('lockstep-spin');
  try {
    fs.copyFileSync(MODEL, path.join(dir, 'lockstep.pml'));
    execFileSync(spin, ['-a', ...defines.map(d => `-D${d}`), 'lockstep.pml'], { cwd: dir, stdio: 'pipe' });
    execFileSync('cc', ['-O2', '-w', '-DCOLLAPSE', '-DMEMLIM=1024', ...cflags, '-o', 'pan', 'pan.c'], { cwd: dir, stdio: 'pipe' });
    const run = spawnSync('./pan', ['-m200000', ...panFlags], { cwd: dir, encoding: 'utf8', maxBuffer: 64 << 20 });
    const report = `${run.stdout}${run.stderr}`;
    const errors = /errors: (\d+)/.exec(report);
    const states = /(\d+) states, stored/.exec(report);
    if (!errors || !states || /out of memory|max search depth too small/i.test(report)) {
      throw new Error(`pan did not complete a search (${defines.join(' ')}):\n${report.slice(-2000)}`);
    }
    const violated = /pan:\d+: (.*)/.exec(report)?.[1];
    return { errors: Number(errors[1]), states: Number(states[1]), report, ...(violated ? { violated } : {}) };
  } finally {
    removeTempDir(dir);
  }
}

/** The printf lines of one random simulation of MODEL (`spin -n SEED -u STEPS`), trimmed. */
export function simulate(spin: string, seed: number, steps: number, defines: readonly string[] = []): string[] {
  const out = execFileSync(spin, [`-n${seed}`, `-u${steps}`, ...defines.map(d => `-D${d}`), MODEL], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  return out
    .split('\n')
    .map(l => l.trim())
    .filter(l => /^[@=#] /.test(l));
}
