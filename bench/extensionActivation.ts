/**
 * The extension's activation, outside VS Code: the built dist/extension.js (built first) is loaded
 * in a fresh Node process with a stand-in for the `vscode` module, and `activate()` runs against a
 * stand-in context, as VS Code calls it for a workspace with no container open. Printed per run:
 *
 *   load      requiring dist/extension.js (the bundle's compile and top-level code)
 *   activate  what the extension measures itself (`getAPI(1).activationMs`: from the first line of
 *             activate() to its return), the figure its log prints and the target is set on
 *
 * The stand-in is a bench-only object that answers every property and call with another stand-in
 * (no folders, no settings, no editors): it costs nothing, so the figures are Lockstep's own code.
 * In VS Code the host adds its own work around both. Target: activate ≤ 20 ms.
 *
 *   npm run bench -- extensionActivation     (or: node --import tsx bench/extensionActivation.ts; BENCH_ROUNDS=N)
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { summaryRow, verdict } from './summary';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const ROOT = path.resolve(__dirname, '..');
const BUNDLE = path.join(ROOT, 'dist', 'extension.js');
/**
 * The stand-in context's global storage, one folder for every run: activate() puts the terminals' `lockstep`
 * launchers there (src/extension/terminalCli.ts), so the warm-up runs write them and the timed runs find them in
 * place, as at each start of VS Code after the first.
 */
const STORAGE = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-bench-activation-'));

/** Runs in the child: installs the stand-in `vscode`, loads the bundle, activates, prints the two times as JSON. */
const CHILD = `
const Module = require('node:module');
const standIn = () => {
  const target = function () {};
  const assigned = new Map();
  return new Proxy(target, {
    set(_t, key, value) { assigned.set(key, value); return true; },
    get(_t, key) {
      if (assigned.has(key)) return assigned.get(key);
      if (key === Symbol.iterator) return function* () {};
      if (key === Symbol.toPrimitive) return () => '';
      if (key === 'then') return undefined;
      if (key === 'length') return 0;
      return standIn();
    },
    apply() { return standIn(); },
    construct() { return standIn(); },
    has() { return false; },
  });
};
// The namespaces and classes of the API, each a stand-in (esbuild's import copies own properties).
const vscode = {};
for (const name of ['commands', 'window', 'workspace', 'languages', 'extensions', 'env', 'l10n', 'Uri', 'EventEmitter', 'Disposable',
  'MarkdownString', 'ProgressLocation', 'RelativePattern', 'StatusBarAlignment', 'ThemeColor', 'ThemeIcon', 'ViewColumn', 'Range',
  'Position', 'Selection', 'ConfigurationTarget', 'version']) vscode[name] = standIn();
const load = Module._load;
Module._load = function (request, ...rest) { return request === 'vscode' ? vscode : load.call(this, request, ...rest); };
const started = performance.now();
const extension = require(${JSON.stringify(BUNDLE)});
const loadMs = performance.now() - started;
const context = { subscriptions: [], extensionUri: { fsPath: ${JSON.stringify(ROOT)} }, globalStorageUri: { fsPath: ${JSON.stringify(STORAGE)} },
  environmentVariableCollection: standIn() };
const api = extension.activate(context);
process.stdout.write(JSON.stringify({ loadMs, activateMs: api.getAPI(1).activationMs }));
process.exit(0);
`;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function main(): void {
  try {
    benchmark();
  } finally {
    fs.rmSync(STORAGE, { recursive: true, force: true });
  }
}

function benchmark(): void {
  const build = spawnSync(process.execPath, ['scripts/build.mjs', '--no-types'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the build failed');
  const loads: number[] = [];
  const activations: number[] = [];
  for (let round = 0; round < ROUNDS + 2; round++) {
    const run = spawnSync(process.execPath, ['-e', CHILD], { cwd: os.tmpdir(), encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`activation failed (${run.status}): ${run.stderr}`);
    const { loadMs, activateMs } = JSON.parse(run.stdout) as { loadMs: number; activateMs: number };
    if (round < 2) continue;
    loads.push(loadMs);
    activations.push(activateMs);
  }
  const load = median(loads);
  const activate = median(activations);
  console.log(
    `extension activation, dist/extension.js in a fresh process with a stand-in vscode — ${ROUNDS} runs (+2 warm-up); node ${process.version}, ${os.cpus().length} CPUs, load ${os
      .loadavg()
      .map(l => l.toFixed(1))
      .join(' ')}`,
  );
  console.log('');
  console.log('| part | median ms | target |');
  console.log('| --- | ---: | --- |');
  console.log(`| load (require dist/extension.js) | ${load.toFixed(1)} | — |`);
  console.log(`| activate() as the extension measures it | ${activate.toFixed(1)} | ≤ 20 ms: ${activate <= 20 ? 'met' : 'NOT met'} |`);
  console.log(`| both | ${(load + activate).toFixed(1)} | — |`);
  summaryRow({
    bench: 'extensionActivation',
    what: 'the built extension with a stand-in `vscode` module',
    lockstep: `\`activate()\` ${activate.toFixed(1)} ms as the extension measures it (loading dist/extension.js before it: ${load.toFixed(1)} ms; medians of ${ROUNDS})`,
    baseline: '—',
    target: `≤ 20 ms: ${verdict(activate <= 20)}`,
  });
}

main();
