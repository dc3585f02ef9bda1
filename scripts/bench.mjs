// Runs the benchmarks: every bench/*.ts (or only the ones named) with tsx, one after the other, and ends with ONE
// table of every row the benches reported (bench/summary.ts): each figure beside its peer or floor from this run,
// and each target's verdict. The README's benchmark table is that table as one run printed it.
// usage: npm run bench [-- NAME…]   e.g. npm run bench -- fileLeases
//        npm run bench:all          every bench with throwaway MariaDB and PostgreSQL servers (scripts/suites/sql.sh
//                                   bench --all), the history at the issue's 100,000 transitions
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
// The benches that load the machine (many processes, servers, a long history, long runs of writes) run last, heaviest
// last, so that the start-up and latency figures are taken on a machine they have not loaded; before each bench the run
// waits for the load they leave behind to settle (below).
const HEAVY = ['fileDisk', 'signedWindow', 'etcdLeases', 'pageScale', 'historyScale', 'fiftyClonesLive'];
const available = fs
  .readdirSync(path.join(root, 'bench'))
  .filter(f => f.endsWith('.ts') && f !== 'summary.ts')
  .map(f => f.slice(0, -3))
  .sort((a, b) => HEAVY.indexOf(a) - HEAVY.indexOf(b) || a.localeCompare(b));
const wanted = process.argv.slice(2);
const unknown = wanted.filter(w => !available.includes(w));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${available.join(', ')}`);
  process.exit(2);
}

// The rows go to a file the benches append to; a caller that set BENCH_SUMMARY keeps its own file.
const ownSummary = !process.env.BENCH_SUMMARY;
const summary = process.env.BENCH_SUMMARY || path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-bench-')), 'summary.jsonl');
const load = () =>
  os
    .loadavg()
    .map(l => l.toFixed(1))
    .join(' ');
const started = Date.now();
const loadAtStart = load();
const failures = [];
/**
 * Waits until the 1-minute load average is at most one per CPU core less a quarter (the benches before this one may
 * have left processes' load behind: fifty windows, servers), at most BENCH_SETTLE_MAX_S (240) before one bench and
 * BENCH_SETTLE_TOTAL_S (600) over the run: on a machine that stays busy the run goes on, and says so once.
 */
const SETTLE_MAX_S = Number(process.env.BENCH_SETTLE_MAX_S ?? 240);
let saidSettleSpent = false;
let settleLeftMs = Number(process.env.BENCH_SETTLE_TOTAL_S ?? 600) * 1000;
function settle() {
  const quiet = os.cpus().length * 0.75;
  const since = Date.now();
  const until = since + Math.min(SETTLE_MAX_S * 1000, settleLeftMs);
  while (os.loadavg()[0] > quiet && Date.now() < until) spawnSync('sleep', ['2']);
  const waitedMs = Date.now() - since;
  settleLeftMs -= waitedMs;
  const now = os.loadavg()[0];
  if (waitedMs >= 1000)
    console.log(
      `[bench] waited ${Math.round(waitedMs / 1000)} s for the load to settle: ${now.toFixed(1)}${now > quiet ? ` (still above ${quiet})` : ''}`,
    );
  if (settleLeftMs <= 0 && now > quiet && !saidSettleSpent) {
    saidSettleSpent = true;
    console.log(`[bench] the run's time for settling (BENCH_SETTLE_TOTAL_S) is spent: the next benches start at this load`);
  }
}
for (const name of wanted.length > 0 ? wanted : available) {
  settle();
  console.log(`\n=== bench/${name}.ts (load ${load()})`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join('bench', `${name}.ts`)], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, BENCH_SUMMARY: summary },
  });
  if (run.status !== 0) {
    failures.push(name);
    console.error(`bench/${name}.ts exited ${run.status ?? run.signal}`);
  }
}

const rows = fs.existsSync(summary)
  ? fs
      .readFileSync(summary, 'utf8')
      .split('\n')
      .filter(line => line.trim() !== '')
      .map(line => JSON.parse(line))
  : [];
const cell = text => String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');
const seconds = Math.round((Date.now() - started) / 1000);
console.log(
  `\n=== One run: ${rows.length} rows from ${wanted.length > 0 ? wanted.length : available.length} benches in ${Math.floor(seconds / 60)} min ${seconds % 60} s, ` +
    `${new Date(started).toISOString().slice(0, 10)}, node ${process.version}, ${os.cpus().length} CPUs, load ${loadAtStart} at the start and ${load()} at the end\n`,
);
console.log('| benchmark | Lockstep | peers or floor, same run | target |');
console.log('| --- | --- | --- | --- |');
for (const row of rows)
  console.log(`| \`${cell(row.bench)}\`: ${cell(row.what)} | ${cell(row.lockstep)} | ${cell(row.baseline)} | ${cell(row.target)} |`);
// A bench that failed after reporting its rows (a SKIPPED part, a FAILED driver) keeps them; one that reported none gets a row.
for (const name of failures.filter(f => !rows.some(row => row.bench === f)))
  console.log(
    `| \`${name}\` | **FAILED**: the bench exited with an error before reporting (its output above says why) | — | not measured |`,
  );
if (failures.length > 0) console.log(`\nExited with an error: ${failures.map(f => `bench/${f}.ts`).join(', ')}.`);
if (ownSummary) fs.rmSync(path.dirname(summary), { recursive: true, force: true });
process.exit(failures.length === 0 ? 0 : 1);
