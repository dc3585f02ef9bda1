// Runs one mocha suite file by file, JOBS files at a time, and reports it as one runner.
//
//   node scripts/mocha-files.mjs --config .mocharc.integration.json [--jobs N] [--idle-jobs M] [FILE ...]
//
// Why: the integration files spend about half their time waiting on the processes they start (git, the CLI, git
// daemon), so two files side by side use a two-core machine's idle core and the suite ends sooner. Mocha's own
// --parallel mode is not used: its reporter sees no suite tree (scripts/test-counts.cjs counts tests that a failed
// hook kept from running by walking that tree) and it loses the per-suite marks the behaviour count reads.
//
// Each file runs in its own mocha process with the config's options (its `spec` is replaced by the one file) and
// its own tally file; each process's output is printed whole when it ends, so the log reads file by file. At the
// end one tally line for the whole suite (LOCKSTEP_SUITE, as every runner's) goes to $LOCKSTEP_TALLY: the sums and
// the union of the behaviours. A file whose process reported nothing, or exited non-zero with no failed test,
// counts as one failure named after it: no file's tests can vanish from the count.
//
// Load: each file's process measures the machine when it starts (test/helpers/calibration.ts: the larger of that
// and the run's LOCKSTEP_TEST_SLOWDOWN), with the other files already running, so its deadlines see their load.
// The run's factor is only raised when more files run than there are cores (× JOBS / cores). Deadlines only: a
// verdict never depends on it.
//
// Order: the longest files first, so that the last to start is a short one. A file's length is its seconds in
// `--durations FILE` (written by an earlier run's `--write-durations FILE`), else estimated from its size at the
// listed files' median seconds per byte. The order changes only when the run ends, never what runs.
// JOBS: --jobs, else LOCKSTEP_TEST_JOBS, else 2 (1 runs the files one after another).
//
// --idle-jobs M (M > JOBS): a file more, up to M at a time, whenever the machine's processors have been at least 40 %
// idle over the last 3 s (Linux's /proc/stat; elsewhere never): a file that mostly waits (a lease that must run out,
// a real 60 s turn) leaves a core idle that the next file can use. Deadlines are scaled as for M files at a time from
// the start, so that a file started in an idle moment keeps its margins when the others wake up.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { readTally, sum } from './tally.mjs';

const { MAX_NAMED_FAILURES } = createRequire(import.meta.url)('./test-counts.cjs');

function usage(message) {
  console.error(
    `mocha-files: ${message}\nusage: node scripts/mocha-files.mjs --config FILE [--jobs N] [--idle-jobs M] [--durations FILE] [--write-durations FILE] [FILE ...]`,
  );
  process.exit(2);
}

function parseArgs(argv) {
  const out = { config: undefined, jobs: undefined, idleJobs: undefined, durations: undefined, writeDurations: undefined, files: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--config') out.config = argv[++i];
    else if (a === '--jobs') out.jobs = argv[++i];
    else if (a === '--idle-jobs') out.idleJobs = argv[++i];
    else if (a === '--durations') out.durations = argv[++i];
    else if (a === '--write-durations') out.writeDurations = argv[++i];
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else out.files.push(a);
  }
  if (!out.config) usage('--config is required');
  const jobs = out.jobs ?? process.env.LOCKSTEP_TEST_JOBS ?? '2';
  if (!/^[1-9][0-9]?$/.test(jobs)) usage(`--jobs must be a whole number from 1 to 99, not ${JSON.stringify(jobs)}`);
  if (out.idleJobs !== undefined && !(/^[1-9][0-9]?$/.test(out.idleJobs) && Number(out.idleJobs) >= Number(jobs))) {
    usage(`--idle-jobs must be a whole number from --jobs (${jobs}) to 99, not ${JSON.stringify(out.idleJobs)}`);
  }
  return { ...out, jobs: Number(jobs), idleJobs: Number(out.idleJobs ?? jobs) };
}

/** The processors' busy and total time so far (jiffies, /proc/stat's first line); undefined where it cannot be read. */
function cpuTimes() {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3] + (fields[4] ?? 0); // idle + iowait
    const total = fields.reduce((a, b) => a + b, 0);
    return { idle, total };
  } catch {
    return undefined;
  }
}

/** The files a config's `spec` globs name: `DIR/**\/*.SUFFIX` patterns only (what this project's configs use). */
function specFiles(spec) {
  const files = [];
  for (const pattern of [].concat(spec ?? [])) {
    const m = /^(.*?)\/\*\*\/\*(\.[^*/]+)$/.exec(pattern);
    if (!m) usage(`cannot expand spec ${JSON.stringify(pattern)}: name the files instead`);
    for (const name of fs.readdirSync(m[1], { recursive: true })) {
      if (String(name).endsWith(m[2])) files.push(path.join(m[1], String(name)));
    }
  }
  return files.sort();
}

/** Mocha's command line for one file: the config's options, spec left out. */
function mochaArgs(config, file) {
  const args = ['--no-config'];
  for (const [key, value] of Object.entries(config)) {
    if (key === 'spec') continue;
    for (const v of [].concat(value)) {
      if (v === true) args.push(`--${key}`);
      else if (v !== false) args.push(`--${key}`, String(v));
    }
  }
  return [...args, file];
}

function scaledSlowdown(jobs) {
  const measured = Number(process.env.LOCKSTEP_TEST_SLOWDOWN);
  const base = Number.isFinite(measured) && measured >= 1 ? measured : 1;
  const share = Math.max(1, jobs / Math.max(1, os.availableParallelism()));
  return String(Math.round(base * share * 100) / 100);
}

const { config: configFile, jobs, idleJobs, durations: durationsFile, writeDurations, files: named } = parseArgs(process.argv.slice(2));
const config = JSON.parse(fs.readFileSync(configFile, 'utf8'));
const files = named.length > 0 ? named : specFiles(config.spec);
if (files.length === 0) usage('no test files');
const mocha = path.resolve('node_modules/mocha/bin/mocha.js');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-mocha-files-'));
const suite = process.env.LOCKSTEP_SUITE || 'mocha';
const slowdown = scaledSlowdown(idleJobs);
const known = durationsFile && fs.existsSync(durationsFile) ? JSON.parse(fs.readFileSync(durationsFile, 'utf8')) : {};
const sized = files.map((file, index) => ({ file, index, size: fs.statSync(file).size, seconds: known[file] }));
const rates = sized
  .filter(f => typeof f.seconds === 'number' && f.size > 0)
  .map(f => f.seconds / f.size)
  .sort((a, b) => a - b);
const perByte = rates.length > 0 ? rates[Math.floor(rates.length / 2)] : 1;
const length = f => (typeof f.seconds === 'number' ? f.seconds : f.size * perByte);
const queue = sized.sort((a, b) => length(b) - length(a));
const results = [];
const running = new Set();
let done = 0;
console.log(
  `[mocha-files] ${files.length} files, ${jobs} at a time${idleJobs > jobs ? ` (up to ${idleJobs} while the processors idle)` : ''} (slowdown factor for deadlines: ${slowdown})`,
);

function runOne(item) {
  return new Promise(resolve => {
    const tally = path.join(scratch, `${item.index}.jsonl`);
    const started = Date.now();
    const child = spawn(process.execPath, [mocha, ...mochaArgs(config, item.file)], {
      env: { ...process.env, LOCKSTEP_TALLY: tally, LOCKSTEP_SUITE: suite, LOCKSTEP_TEST_SLOWDOWN: slowdown },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own, so that a stopped run takes the file's servers (git daemon…) with it.
      detached: true,
    });
    running.add(child);
    const chunks = [];
    child.stdout.on('data', c => chunks.push(c));
    child.stderr.on('data', c => chunks.push(c));
    child.on('close', (code, signal) => {
      running.delete(child);
      done++;
      const seconds = Math.round((Date.now() - started) / 100) / 10;
      const rc = code ?? 128;
      console.log(`\n[mocha-files] ${done}/${files.length} ${item.file}: exit ${code ?? signal} in ${seconds} s`);
      process.stdout.write(Buffer.concat(chunks));
      resolve({ file: item.file, rc, seconds, lines: readTally(tally) });
    });
  });
}

async function worker() {
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) results.push(await runOne(item));
}

/** Starts a file more (up to idleJobs at a time) each time the processors were at least 40 % idle over the last 3 s. */
async function idleWorker() {
  const samples = [];
  let extra = 0;
  const pending = [];
  while (queue.length > 0) {
    await new Promise(resolve => setTimeout(resolve, 500));
    const t = cpuTimes();
    if (t === undefined) break;
    samples.push(t);
    if (samples.length > 7) samples.shift();
    const first = samples[0];
    const idle = samples.length === 7 && t.total > first.total ? (t.idle - first.idle) / (t.total - first.total) : 0;
    if (idle >= 0.4 && running.size < idleJobs && extra < idleJobs - jobs) {
      const item = queue.shift();
      if (item === undefined) break;
      extra++;
      samples.length = 0; // the next decision sees the new file's load
      pending.push(
        runOne(item).then(r => {
          results.push(r);
          extra--;
        }),
      );
    }
  }
  await Promise.all(pending);
}

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const child of running) {
      try {
        process.kill(-child.pid, 'SIGKILL'); // the file's whole group: its mocha and every server it started
      } catch {
        child.kill('SIGKILL');
      }
    }
    process.exit(sig === 'SIGINT' ? 130 : 143);
  });
}

await Promise.all([...Array.from({ length: Math.min(jobs, files.length) }, worker), ...(idleJobs > jobs ? [idleWorker()] : [])]);
fs.rmSync(scratch, { recursive: true, force: true });

const lines = [];
const broken = [];
for (const r of results) {
  const failedTests = r.lines.reduce((n, l) => n + l.failed, 0);
  if (r.lines.length === 0) broken.push(`${r.file}: exited ${r.rc} before reporting`);
  else if (r.rc !== 0 && failedTests === 0) broken.push(`${r.file}: exited ${r.rc} but reported no failure`);
  lines.push(...r.lines);
}
const total = sum(lines);
const line = {
  suite,
  passed: total.passed,
  failed: total.failed + broken.length,
  skipped: total.skipped,
  behaviours: [...new Set(lines.flatMap(l => l.behaviours ?? []))].sort(),
};
if (broken.length > 0) line.note = broken.join('; ');
const failures = lines.flatMap(l => l.failures ?? []).slice(0, MAX_NAMED_FAILURES);
if (failures.length > 0) line.failures = failures;
if (writeDurations) {
  const measured = Object.fromEntries(results.map(r => [r.file, r.seconds]).sort((a, b) => b[1] - a[1]));
  fs.writeFileSync(writeDurations, `${JSON.stringify(measured, null, 2)}\n`);
}
if (process.env.LOCKSTEP_TALLY) fs.appendFileSync(process.env.LOCKSTEP_TALLY, `${JSON.stringify(line)}\n`);
console.log(`\n[mocha-files] ${suite}: ${line.passed} passed, ${line.failed} failed, ${line.skipped} skipped over ${files.length} files`);
for (const b of broken) console.log(`[mocha-files] FAILED: ${b}`);
process.exit(line.failed > 0 ? 1 : 0);
