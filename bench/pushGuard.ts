/**
 * What Lockstep's fencing guards add to a `git push`: a push of one small commit to a local bare
 * remote, timed end to end (git's own process), with and without the guards, in ONE run:
 *
 *   none     no Lockstep hooks
 *   client   the clone's pre-push hook (`lockstep guard pre-push`)
 *   server   the remote's pre-receive hook (`lockstep guard pre-receive`)
 *   both     client + server: what a team with `hooks install` and `hooks install --server` pays
 *   node     a pre-push and a pre-receive hook that each only run `node -e 0`: the floor of a guard
 *            written in Node (target, issue 30: each guard at most 0.5× what one more such hook adds)
 *
 * and, from the "none" and "both" clones, a push of an unprotected branch (target: with both hooks
 * at most 1.5× the same push without hooks: the client guard's leak check runs, the server guard does not).
 *
 * Fairness: every variant is the same container (`init --server-guard`), holds the lock and sends
 * the same push options (every remote advertises them), so only the hooks differ. The commit before
 * each push is not timed. Variants take turns push by push, so drift on a shared machine hits all of
 * them alike. The CLI is the built dist/cli.js (built first), as installed hooks run it. The guards
 * read the record from the file driver (LOCKSTEP_PATH on the same disk).
 *
 *   npm run bench -- pushGuard      (or: node --import tsx bench/pushGuard.ts; BENCH_PUSHES=N)
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { summaryRow, times as ratioText, verdict } from './summary';

const PUSHES = Number(process.env.BENCH_PUSHES ?? 20);
const WARMUP = 2;
const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');

type Variant = 'none' | 'client' | 'server' | 'both' | 'node' | 'none-feature' | 'both-feature';
const VARIANTS: { name: Variant; label: string; client: boolean; server: boolean; nodeHooks?: boolean }[] = [
  { name: 'none', label: 'main: no guards', client: false, server: false },
  { name: 'node', label: 'main: `node -e 0` pre-push + pre-receive', client: false, server: false, nodeHooks: true },
  { name: 'client', label: 'main: pre-push guard only', client: true, server: false },
  { name: 'server', label: 'main: pre-receive guard only', client: false, server: true },
  { name: 'both', label: 'main: both guards (client + server)', client: true, server: true },
];
/**
 * Pushes of an unprotected branch to the remote of the variant named, from a second clone with the
 * same hooks that holds no grant (a coworker: a holder's clone carries a push proof, whose leak
 * the client guard checks on every push).
 */
const FEATURE_PUSHES: { name: Variant; from: Variant; label: string }[] = [
  { name: 'none-feature', from: 'none', label: 'feature branch: no guards' },
  { name: 'both-feature', from: 'both', label: 'feature branch: both guards' },
];
const NODE_HOOK = `#!/bin/sh\ncat > /dev/null\nexec '${process.execPath.replace(/'/g, `'\\''`)}' -e 0\n`;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function run(file: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(file, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    child.on('error', reject);
    child.on('close', code => resolve({ code, stdout, stderr, ms: performance.now() - started }));
  });
}

async function must(file: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  const done = await run(file, args, cwd, env);
  if (done.code !== 0) throw new Error(`${path.basename(file)} ${args.join(' ')} failed (${done.code}): ${done.stderr}${done.stdout}`);
  return done;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

async function main(): Promise<void> {
  await must(process.execPath, ['scripts/build.mjs', '--no-types'], ROOT, process.env);
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-bench-push-')));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('LOCKSTEP_') && !k.startsWith('GIT_')) env[k] = v;
  Object.assign(env, { HOME: root, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', LOCKSTEP_PATH: path.join(root, 'store') });
  const git = (cwd: string, ...args: string[]) => must('git', args, cwd, env);
  const lockstep = (cwd: string, ...args: string[]) => must(process.execPath, [CLI, '--cwd', cwd, ...args], root, env);

  try {
    const clones = new Map<Variant, string>();
    for (const v of VARIANTS) {
      const remote = path.join(root, `${v.name}.git`);
      const clone = path.join(root, v.name);
      await git(root, 'init', '--quiet', '--bare', '--initial-branch=main', remote);
      await git(remote, 'config', 'receive.advertisePushOptions', 'true');
      await git(root, 'clone', '--quiet', remote, clone);
      await git(clone, 'config', 'user.email', `${v.name}@example.com`);
      await git(clone, 'config', 'user.name', v.name);
      await git(clone, 'symbolic-ref', 'HEAD', 'refs/heads/main');
      await git(clone, 'commit', '--quiet', '--allow-empty', '-m', 'first');
      await git(clone, 'push', '--quiet', 'origin', 'main');
      await lockstep(clone, 'init', '--server-guard');
      await git(clone, 'add', '.lockstep.json');
      await git(clone, 'commit', '--quiet', '-m', 'container');
      await git(clone, 'push', '--quiet', 'origin', 'main');
      // The server guard pins the committed .lockstep.json of main, so it is installed after that push.
      if (v.server) await lockstep(remote, 'hooks', 'install', '--server');
      if (v.client) await lockstep(clone, 'hooks', 'install');
      if (v.nodeHooks) {
        fs.writeFileSync(path.join(clone, '.git', 'hooks', 'pre-push'), NODE_HOOK, { mode: 0o755 });
        fs.writeFileSync(path.join(remote, 'hooks', 'pre-receive'), NODE_HOOK, { mode: 0o755 });
      }
      await lockstep(clone, 'acquire');
      clones.set(v.name, clone);
    }
    for (const f of FEATURE_PUSHES) {
      const from = VARIANTS.find(v => v.name === f.from)!;
      const clone = path.join(root, f.name);
      await git(root, 'clone', '--quiet', path.join(root, `${from.name}.git`), clone);
      await git(clone, 'config', 'user.email', `${f.name}@example.com`);
      await git(clone, 'config', 'user.name', f.name);
      if (from.client) await lockstep(clone, 'hooks', 'install');
      clones.set(f.name, clone);
    }

    const times = new Map<Variant, number[]>([...VARIANTS, ...FEATURE_PUSHES].map(v => [v.name, []]));
    for (let round = 0; round < WARMUP + PUSHES; round++) {
      for (const v of VARIANTS) {
        const clone = clones.get(v.name)!;
        fs.writeFileSync(path.join(clone, 'work.txt'), `round ${round}\n`);
        await git(clone, 'add', 'work.txt');
        await git(clone, 'commit', '--quiet', '-m', `round ${round}`);
        const pushed = await must('git', ['push', '--quiet', 'origin', 'main'], clone, env);
        if (v.client && !/grant #1 verified/.test(pushed.stderr))
          throw new Error(`the ${v.name} push did not run the client guard: ${pushed.stderr}`);
        if (round >= WARMUP) times.get(v.name)!.push(pushed.ms);
      }
      for (const f of FEATURE_PUSHES) {
        const clone = clones.get(f.name)!;
        await git(clone, 'commit', '--quiet', '--allow-empty', '-m', `feature ${round}`);
        const pushed = await must('git', ['push', '--quiet', 'origin', 'HEAD:refs/heads/feature'], clone, env);
        if (round >= WARMUP) times.get(f.name)!.push(pushed.ms);
      }
    }

    const gitVersion = (await git(root, '--version')).stdout.trim();
    console.log(`git push of one small commit to a local bare remote — ${PUSHES} pushes per variant (+${WARMUP} warm-up), interleaved`);
    console.log(
      `node ${process.version}, ${gitVersion}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), file driver on ${os.tmpdir()}`,
    );
    console.log('');
    const base = [...times.get('none')!].sort((a, b) => a - b);
    const baseMedian = percentile(base, 50);
    const header = ['variant', 'median ms', 'p90 ms', 'min ms', 'added ms (median)', 'ratio'];
    const medianOf = (name: Variant) =>
      percentile(
        [...times.get(name)!].sort((a, b) => a - b),
        50,
      );
    const rows = [...VARIANTS, ...FEATURE_PUSHES].map(v => {
      const sorted = [...times.get(v.name)!].sort((a, b) => a - b);
      const median = percentile(sorted, 50);
      const floor = v.name === 'both-feature' ? medianOf('none-feature') : baseMedian;
      return [
        v.label,
        median.toFixed(1),
        percentile(sorted, 90).toFixed(1),
        sorted[0].toFixed(1),
        v.name === 'none' || v.name === 'none-feature' ? '—' : `+${(median - floor).toFixed(1)}`,
        `${(median / floor).toFixed(2)}×`,
      ];
    });
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map(r => r[i].length)));
    const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
    console.log(line(header));
    for (const row of rows) console.log(line(row));
    console.log('');
    console.log(
      'Each guard on a protected push is one node process running dist/cli.js (bundle load + one record read); "both" pays it twice.',
    );
    const perGuard = (medianOf('both') - medianOf('node')) / 2;
    const unprotected = medianOf('both-feature') / medianOf('none-feature');
    // On a loaded machine every process start stretches alike: the guard's cost in `node -e 0` hooks is the steadier figure.
    const perNodeHook = (medianOf('node') - medianOf('none')) / 2;
    const ratio = perGuard / perNodeHook;
    console.log(
      `target: each guard ≤ 0.5× one more Node start: ${ratio <= 0.5 ? 'met' : 'NOT met'} (${ratio.toFixed(2)}×: +${perGuard.toFixed(1)} ms per guard over a \`node -e 0\` hook, which itself adds ${perNodeHook.toFixed(1)} ms)`,
    );
    // Each guard on its own, against the same floor: what its variant adds over one `node -e 0` hook.
    const alone = new Map<Variant, number>();
    for (const [name, label] of [
      ['client', 'pre-push guard'],
      ['server', 'pre-receive guard'],
    ] as const) {
      const own = medianOf(name) - medianOf('none') - perNodeHook;
      alone.set(name, own / perNodeHook);
      console.log(
        `${label} alone: ${own >= 0 ? '+' : ''}${own.toFixed(1)} ms over a \`node -e 0\` hook, ${(own / perNodeHook).toFixed(2)}× one more Node start (target ≤ 0.5×)`,
      );
    }
    console.log(
      `target: unprotected push with both hooks ≤ 1.5× without hooks: ${unprotected <= 1.5 ? 'met' : 'NOT met'} (${unprotected.toFixed(2)}×)`,
    );
    const ms = (name: Variant) => `${medianOf(name).toFixed(1)} ms`;
    summaryRow({
      bench: 'pushGuard',
      what: 'push of an unprotected branch to a local bare remote, both hooks installed, from a clone without a grant',
      lockstep: `${ms('both-feature')} (median of ${PUSHES})`,
      baseline: `${ms('none-feature')} without hooks: **${ratioText(unprotected)}**`,
      target: `≤ 1.5×: ${verdict(unprotected <= 1.5)} (no Node process starts)`,
    });
    const clientAlone = alone.get('client')!;
    const serverAlone = alone.get('server')!;
    summaryRow({
      bench: 'pushGuard',
      what: 'push of a protected branch by the holder, both guards',
      lockstep: `${ms('both')} (median of ${PUSHES}); pre-push guard only ${ms('client')}, pre-receive only ${ms('server')}`,
      baseline:
        `${ms('none')} without hooks; ${ms('node')} with a \`node -e 0\` pre-push + pre-receive pair (each such hook adds ${perNodeHook.toFixed(1)} ms): ` +
        `${perGuard >= 0 ? '+' : ''}${perGuard.toFixed(1)} ms per guard, **${ratioText(ratio)}** one more Node start; ` +
        `the pre-push guard alone **${ratioText(clientAlone)}**, the pre-receive guard alone **${ratioText(serverAlone)}**`,
      target:
        `each guard ≤ 0.5× one more Node start: ${verdict(ratio <= 0.5)}; ` +
        `alone: pre-push ${verdict(clientAlone <= 0.5)}, pre-receive ${verdict(serverAlone <= 0.5)}`,
    });
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch(error => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
