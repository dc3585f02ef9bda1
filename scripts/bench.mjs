// Runs the benchmarks: every bench/*.ts (or only the ones named) with tsx, one after the other.
// usage: npm run bench [-- NAME…]   e.g. npm run bench -- fileLeases
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const available = fs
  .readdirSync(path.join(root, 'bench'))
  .filter(f => f.endsWith('.ts'))
  .map(f => f.slice(0, -3))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter(w => !available.includes(w));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${available.join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length > 0 ? wanted : available) {
  console.log(`\n=== bench/${name}.ts`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join('bench', `${name}.ts`)], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) {
    failed++;
    console.error(`bench/${name}.ts exited ${run.status ?? run.signal}`);
  }
}
process.exit(failed === 0 ? 0 : 1);
