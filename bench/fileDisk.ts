/**
 * What the file driver leaves on disk after many distinct names: 100,000 names (BENCH_NAMES),
 * each acquired and released once through the public manager, with no clean-up of any kind. One
 * name ("tracked") is taken again every 1,000 names, so its fencing tokens are checked to rise
 * strictly across all of it. Prints the store's entries (files and folders) and the bytes they
 * occupy on disk (allocated blocks), against the bound: at most 300 entries beyond the live
 * leases (none are live at the end) and at most 1 MB. (The integration test checks the same bound
 * with 1,500 names; this is the full-size run.)
 *
 *   npm run bench -- fileDisk          (or: node --import tsx bench/fileDisk.ts; BENCH_NAMES=N)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createLockManager } from '../src/core/leases';
import { summaryRow, verdict } from './summary';

const NAMES = Number(process.env.BENCH_NAMES ?? 100_000);
const TRACK_EVERY = 1_000;
const MAX_ENTRIES = 300;
const MAX_BYTES = 1024 * 1024;

function measure(dir: string): { entries: number; bytes: number } {
  let entries = 0;
  let bytes = 0;
  const visit = (at: string) => {
    for (const name of fs.readdirSync(at)) {
      const full = path.join(at, name);
      const stat = fs.lstatSync(full);
      entries++;
      bytes += stat.blocks * 512;
      if (stat.isDirectory()) visit(full);
    }
  };
  visit(dir);
  return { entries, bytes };
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'lockstep-bench-disk-'));
  const store = path.join(root, 'store');
  const manager = createLockManager({ env: { LOCKSTEP_DRIVER: 'file', LOCKSTEP_PATH: store, LOCKSTEP_PREFIX: 'bench' } });
  try {
    const tokens: number[] = [];
    const started = performance.now();
    for (let i = 0; i < NAMES; i++) {
      const handle = await manager.acquire(`distinct-name-${i}`, { ttl: 30 });
      if (!handle.acquired || !(await handle.release())) throw new Error(`name ${i} was not acquired and released`);
      if (i % TRACK_EVERY === 0) {
        const tracked = await manager.acquire('tracked', { ttl: 30 });
        if (!tracked.acquired || tracked.fencingToken === undefined) throw new Error('the tracked name was not acquired');
        tokens.push(tracked.fencingToken);
        await tracked.release();
      }
    }
    const seconds = (performance.now() - started) / 1000;
    const { entries, bytes } = measure(store);
    const increasing = tokens.every((t, i) => i === 0 || t > tokens[i - 1]);
    console.log(
      `file driver disk after ${NAMES.toLocaleString('en-US')} distinct names acquired and released (${seconds.toFixed(1)} s, ${Math.round(NAMES / seconds).toLocaleString('en-US')} names/s); node ${process.version}, ${os.tmpdir()}`,
    );
    console.log('');
    console.log('| measure | value | target |');
    console.log('| --- | ---: | --- |');
    console.log(
      `| entries (files and folders) | ${entries} | ≤ ${MAX_ENTRIES} beyond the live leases (0 live): ${entries <= MAX_ENTRIES ? 'met' : 'NOT met'} |`,
    );
    console.log(`| allocated bytes | ${bytes.toLocaleString('en-US')} | ≤ 1 MB: ${bytes <= MAX_BYTES ? 'met' : 'NOT met'} |`);
    console.log(
      `| fencing tokens of one name taken ${tokens.length} times in between | ${tokens[0]} … ${tokens[tokens.length - 1]} | strictly increasing: ${increasing ? 'met' : 'NOT met'} |`,
    );
    summaryRow({
      bench: 'fileDisk',
      what: `the file store after ${NAMES.toLocaleString('en-US')} distinct names acquired and released`,
      lockstep: `${entries} entries, ${bytes.toLocaleString('en-US')} bytes allocated; one name's fencing token ${increasing ? 'strictly increasing' : '**not** strictly increasing'} across them (${tokens[0]} … ${tokens[tokens.length - 1]}, ${tokens.length} takes)`,
      baseline: '—',
      target: `≤ ${MAX_ENTRIES} entries and ≤ 1 MB: ${verdict(entries <= MAX_ENTRIES && bytes <= MAX_BYTES)}; tokens strictly increasing: ${verdict(increasing)}`,
    });
  } finally {
    await manager.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch(error => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
