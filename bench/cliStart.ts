/**
 * What one `lockstep` command costs over starting Node at all: `status`, `acquire`, `heartbeat` and
 * `release` of a container on the file driver, run as a user runs them (`node dist/cli.js …`, built
 * first), against `node -e 0`, in ONE run. Commands take turns round by round (node, status,
 * acquire, heartbeat, release), so drift on a shared machine hits all of them alike. Target: each
 * at most 30 ms above `node -e 0`. `release` includes its check that the work landed on the remote
 * (a local bare repository here). Beside them, the floor of any `status` (bench/statusFloor.cjs: the
 * child-process and crypto modules, the same two git processes side by side, one file read and hashed,
 * no Lockstep code), so that a run shows how much of `status` is Lockstep's own.
 *
 *   npm run bench -- cliStart       (or: node --import tsx bench/cliStart.ts; BENCH_ROUNDS=N)
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { summaryRow, times as ratioText, verdict } from './summary';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const WARMUP = 2;
const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const COMMANDS = ['status', 'acquire', 'heartbeat', 'release'] as const;
const FLOOR = path.join(ROOT, 'bench', 'statusFloor.cjs');
const FLOOR_ROW = "status's floor (bench/statusFloor.cjs)";

function timed(file: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const done = spawnSync(file, args, { cwd, env, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (done.status !== 0) throw new Error(`${args.join(' ')} failed (${done.status}): ${done.stderr}${done.stdout}`);
  return ms;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function main(): void {
  timed(process.execPath, ['scripts/build.mjs', '--no-types'], ROOT, process.env);
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-bench-cli-')));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('LOCKSTEP_') && !k.startsWith('GIT_')) env[k] = v;
  Object.assign(env, { HOME: root, GIT_CONFIG_NOSYSTEM: '1', LOCKSTEP_PATH: path.join(root, 'store') });
  try {
    const clone = path.join(root, 'clone');
    const remote = path.join(root, 'remote.git');
    timed('git', ['init', '--quiet', '--bare', '--initial-branch=main', remote], root, env);
    timed('git', ['clone', '--quiet', remote, clone], root, env);
    timed('git', ['config', 'user.email', 'bench@example.com'], clone, env);
    timed('git', ['config', 'user.name', 'bench'], clone, env);
    timed('git', ['symbolic-ref', 'HEAD', 'refs/heads/main'], clone, env);
    timed(process.execPath, [CLI, 'init'], clone, env);
    timed('git', ['add', '.lockstep.json'], clone, env);
    timed('git', ['commit', '--quiet', '-m', 'container'], clone, env);
    timed('git', ['push', '--quiet', 'origin', 'main'], clone, env);

    const times = new Map<string, number[]>([['node -e 0', []], [FLOOR_ROW, []], ...COMMANDS.map(c => [c, []] as [string, number[]])]);
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      const floor = timed(process.execPath, ['-e', '0'], clone, env);
      const statusFloor = timed(process.execPath, [FLOOR], clone, env);
      const ran = COMMANDS.map(command => timed(process.execPath, [CLI, command], clone, env));
      if (round < WARMUP) continue;
      times.get('node -e 0')!.push(floor);
      times.get(FLOOR_ROW)!.push(statusFloor);
      COMMANDS.forEach((command, i) => {
        times.get(command)!.push(ran[i]);
      });
    }

    const floor = median(times.get('node -e 0')!);
    console.log(
      `lockstep commands, file driver — ${ROUNDS} rounds (+${WARMUP} warm-up), interleaved; node ${process.version}, ${os.cpus().length} CPUs, load ${os
        .loadavg()
        .map(l => l.toFixed(1))
        .join(' ')}`,
    );
    console.log('');
    // On a loaded machine every process start stretches alike: the ratio to `node -e 0` is the steadier figure.
    console.log('| command | median ms | above `node -e 0` | × `node -e 0` | target (issue 30: `status` ≤ 1.3× `node -e 0`) |');
    console.log('| --- | ---: | ---: | ---: | --- |');
    console.log(`| node -e 0 | ${floor.toFixed(1)} | — | 1.00× | — |`);
    const least = median(times.get(FLOOR_ROW)!);
    console.log(`| ${FLOOR_ROW} | ${least.toFixed(1)} | +${(least - floor).toFixed(1)} | ${(least / floor).toFixed(2)}× | — |`);
    const medians = new Map<string, number>();
    for (const command of COMMANDS) {
      const m = median(times.get(command)!);
      medians.set(command, m);
      console.log(
        `| ${command} | ${m.toFixed(1)} | +${(m - floor).toFixed(1)} | ${(m / floor).toFixed(2)}× | ${command === 'status' ? (m / floor <= 1.3 ? 'met' : 'NOT met') : '—'} |`,
      );
    }
    summaryRow({
      bench: 'cliStart',
      what: `${COMMANDS.map(command => `\`${command}\``).join(' / ')}, file driver (medians of ${ROUNDS})`,
      lockstep: `${COMMANDS.map(command => (command === 'status' ? `**${ratioText(medians.get(command)! / floor)}**` : ratioText(medians.get(command)! / floor))).join(' / ')} \`node -e 0\` (${COMMANDS.map(command => `+${(medians.get(command)! - floor).toFixed(1)}`).join(' / ')} ms)`,
      baseline: `\`node -e 0\` ${floor.toFixed(1)} ms; \`status\`'s floor (bench/statusFloor.cjs, no Lockstep code) ${least.toFixed(1)} ms, ${ratioText(least / floor)}`,
      target: `\`status\` ≤ 1.3× \`node -e 0\`: ${verdict(medians.get('status')! / floor <= 1.3)}`,
    });
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main();
