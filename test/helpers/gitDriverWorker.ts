/**
 * One contending process of the git driver's contention tests, working in its own clone.
 *
 *   node -r tsx/cjs test/helpers/gitDriverWorker.ts --mode counter|lease --clone DIR --key HEX --id N [--rounds K] [--shared DIR]
 *
 * counter: reads the counter record, prints `{"ready":true}`, waits for a line on stdin (the
 *   parent's "go", so that every worker writes from the same base at once), tries once to move
 *   {n} to {n+1} from that base, then retries (read + compareAndSwap) until it has written once.
 * lease: K times: claims the plain lease (retrying while busy), proves exclusivity with an O_EXCL
 *   marker file in DIR, appends its fencing token to DIR/tokens, removes the marker, releases.
 * Prints one JSON result line last.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes, randomInt } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createGitDriver } from '../../src/core/stores/git/gitDriver';

export interface CounterResult {
  readonly id: string;
  /** Whether the first write, from the common base, won. */
  readonly firstOk: boolean;
  /** The successful write: the revision it was computed from and the one it made. */
  readonly win: { from: string; to: string; n: number };
  readonly attempts: number;
}

export interface LeaseResult {
  readonly id: string;
  tokens: number[];
  violations: number;
  releases: string[];
  busy: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      mode: { type: 'string' },
      clone: { type: 'string' },
      key: { type: 'string' },
      id: { type: 'string' },
      rounds: { type: 'string', default: '3' },
      shared: { type: 'string' },
      prefix: { type: 'string', default: 'lockstep-test' },
    },
  });
  const { mode, clone, key, id } = values;
  if (!clone || !key || !id) throw new Error('gitDriverWorker: --clone, --key and --id are required');
  const driver = createGitDriver({ gitDir: clone, gitRemote: 'origin', prefix: values.prefix!, gitTimeoutMs: 60_000 });
  try {
    if (mode === 'counter') await counter(driver, key, id);
    else if (mode === 'lease') await lease(driver, key, id, Number(values.rounds), values.shared!);
    else throw new Error(`gitDriverWorker: unknown mode ${mode}`);
  } finally {
    await driver.close();
  }
}

type Driver = ReturnType<typeof createGitDriver>;

async function counter(driver: Driver, key: string, id: string): Promise<void> {
  const base = await driver.read(key);
  if (base === null) throw new Error('no counter record');
  process.stdout.write(`${JSON.stringify({ ready: true, base: base.revision })}\n`);
  const lines = createInterface({ input: process.stdin });
  await once(lines, 'line');
  lines.close();

  let current = base;
  let attempts = 0;
  let firstOk: boolean | undefined;
  for (;;) {
    const n = (current.value as { n: number }).n;
    attempts++;
    const written = await driver.compareAndSwap(key, current.revision, { n: n + 1, by: id }, { summary: `worker ${id}: ${n} -> ${n + 1}` });
    firstOk ??= written.ok;
    if (written.ok) {
      const result: CounterResult = { id, firstOk, win: { from: current.revision, to: written.revision, n: n + 1 }, attempts };
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }
    const fresh = await driver.read(key);
    if (fresh === null) throw new Error('counter record vanished');
    current = fresh;
  }
}

async function lease(driver: Driver, key: string, id: string, rounds: number, shared: string): Promise<void> {
  const marker = path.join(shared, 'inside');
  const result: LeaseResult = { id, tokens: [], violations: 0, releases: [], busy: 0 };
  for (let round = 0; round < rounds; round++) {
    const owner = randomBytes(32).toString('hex');
    let token: number | undefined;
    while (token === undefined) {
      const claim = await driver.claim(key, owner, 120_000, Date.now());
      if (claim.claimed) token = claim.fencingToken;
      else {
        result.busy++;
        // Back off like LockManager does (5–25 ms), so waiters do not poll the remote in step.
        await new Promise(resolve => setTimeout(resolve, randomInt(5, 26)));
      }
    }
    let marked = false;
    try {
      fs.closeSync(fs.openSync(marker, 'wx'));
      marked = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      result.violations++;
    }
    fs.appendFileSync(path.join(shared, 'tokens'), `${token}\n`);
    result.tokens.push(token);
    if (marked) fs.unlinkSync(marker);
    result.releases.push(await driver.release(key, owner, Date.now()));
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch(error => {
  process.stderr.write(`gitDriverWorker: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 2;
});
