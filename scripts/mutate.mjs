#!/usr/bin/env node
// `npm run mutate`: mutation testing of the core rules with StrykerJS (stryker.config.mjs, docs/mutation.md).
// It takes a long time (every mutant of every listed file against the unit tests that cover it), so it runs only
// when asked for by LOCKSTEP_MUTATE=1 and is never part of `npm test` (scripts/test-all.sh). Extra arguments go to
// `stryker run`, e.g. `LOCKSTEP_MUTATE=1 npm run mutate -- --mutate src/core/bounds.ts` for one file.
// The reports land in reports/mutation/ (git-ignored); the last line printed is the score with its counts.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (process.env.LOCKSTEP_MUTATE !== '1') {
  console.error(
    'npm run mutate runs StrykerJS over the core rules and takes a long while (docs/mutation.md). ' +
      'Run it with LOCKSTEP_MUTATE=1 npm run mutate (add -- --mutate FILE for one file).',
  );
  process.exit(2);
}

const report = path.join(root, 'reports', 'mutation', 'mutation.json');
fs.rmSync(report, { force: true });
const stryker = path.join(root, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js');
const run = spawnSync(process.execPath, [stryker, 'run', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
if (run.error) {
  console.error(`Stryker did not start: ${run.error.message}`);
  process.exit(1);
}
if (!fs.existsSync(report)) {
  console.error(`Stryker ended (status ${run.status}) without a report at ${path.relative(root, report)}.`);
  process.exit(run.status || 1);
}

const counts = { Killed: 0, Survived: 0, Timeout: 0, NoCoverage: 0, CompileError: 0, RuntimeError: 0, Ignored: 0 };
const survivors = [];
const { files } = JSON.parse(fs.readFileSync(report, 'utf8'));
for (const [file, { mutants }] of Object.entries(files)) {
  for (const m of mutants) {
    counts[m.status] = (counts[m.status] ?? 0) + 1;
    if (m.status === 'Survived' || m.status === 'NoCoverage') {
      survivors.push(
        `${m.status === 'NoCoverage' ? 'no coverage' : 'survived'} ${file}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName}: ${JSON.stringify(m.replacement ?? '')}`,
      );
    }
  }
}
// Stryker's own score: detected (killed + timeout) over valid (detected + survived + no coverage).
const detected = counts.Killed + counts.Timeout;
const valid = detected + counts.Survived + counts.NoCoverage;
const score = valid === 0 ? 0 : (100 * detected) / valid;
if (survivors.length > 0) console.log(`\nUndetected mutants (${survivors.length}):\n  ${survivors.join('\n  ')}`);
console.log(
  `\nMutation score ${score.toFixed(2)} % over ${Object.keys(files).length} file(s): ${counts.Killed} killed, ` +
    `${counts.Survived} survived, ${counts.Timeout} timeout, ${counts.NoCoverage} no coverage ` +
    `(${counts.CompileError + counts.RuntimeError} errors, ${counts.Ignored} ignored). Report: reports/mutation/mutation.html`,
);
process.exit(run.status ?? 1);
