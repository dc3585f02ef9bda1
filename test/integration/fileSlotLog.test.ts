import * as assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { namespaceDigest } from '../../src/core/names';
import { createFileDriver, FILE_LEASE_SLOTS } from '../../src/core/stores/file';
import { slotOf } from '../../src/core/stores/leaseSlots';
import { childEnv, fileDriverEnv, killHard, spawnTs } from '../helpers/children';
import { useTempDir, walk } from '../helpers/tempDir';
import { waitFor } from '../helpers/waitFor';

/**
 * The file driver's lease slots as append-only logs (src/core/stores/fileSlotLog.ts): torn
 * records, generations, and processes killed with SIGKILL at arbitrary instants of their writes.
 */
const PREFIX = 'slots';
/** Keys of one slot (slot 3 of 8: the first byte is 0x03, 0x23, 0x43, …), so that they share a log and its counter. */
function keysOfOneSlot(count: number): string[] {
  return ['03', '23', '43', '63'].slice(0, count).map(first => first + 'ab'.repeat(31));
}
const owner = (n: number) => n.toString(16).padStart(64, '0');
const slotDir = (store: string, key: string) => path.join(store, namespaceDigest(PREFIX), `s${slotOf(key, FILE_LEASE_SLOTS).toString(16).padStart(2, '0')}`);
const logsOf = (dir: string) => fs.readdirSync(dir).filter(f => /^\d{10}\.log$/.test(f)).sort();

describe('file driver: lease slot logs', function () {
  this.timeout(120_000);
  const tmp = useTempDir('lockstep-slot-log');

  it('skips a torn record (a writer killed mid-write) and goes on accepting writes after it', async () => {
    const store = path.join(tmp.path, 'store');
    const driver = createFileDriver({ path: store, prefix: PREFIX });
    const [key] = keysOfOneSlot(1);
    const first = await driver.claim(key, owner(1), 30_000, Date.now());
    assert.ok(first.claimed);
    const dir = slotDir(store, key);
    // What a writer killed in the middle of its append leaves: the start of a record.
    fs.appendFileSync(path.join(dir, logsOf(dir).pop()!), '\n@180:{"s":2,"k":"write","v":{"v":1,"counter":9');
    assert.equal(await driver.release(key, owner(1), Date.now()), 'released');
    const fresh = createFileDriver({ path: store, prefix: PREFIX });
    const second = await fresh.claim(key, owner(2), 30_000, Date.now());
    assert.ok(second.claimed && second.fencingToken > first.fencingToken);
  });

  it('seals a log that grew and continues in a new generation: at most two logs, state and tokens carried over, also for a process that had the old log open', async () => {
    const store = path.join(tmp.path, 'store');
    const a = createFileDriver({ path: store, prefix: PREFIX });
    const b = createFileDriver({ path: store, prefix: PREFIX });
    const [key, other] = keysOfOneSlot(2);
    const dir = slotDir(store, key);
    assert.ok((await a.claim(other, owner(7), 60_000, Date.now())).claimed, 'a holds another key of the slot');
    const tokens: number[] = [];
    const generations = new Set<string>();
    for (let i = 0; i < 400; i++) {
      const c = await b.claim(key, owner(1), 30_000, Date.now());
      assert.ok(c.claimed);
      tokens.push(c.fencingToken);
      assert.equal(await b.release(key, owner(1), Date.now()), 'released');
      const logs = logsOf(dir);
      assert.ok(logs.length >= 1 && logs.length <= 2, `${logs.length} logs`);
      for (const log of logs) generations.add(log);
    }
    assert.ok(generations.size >= 3, `rotated (${generations.size} generations seen)`);
    for (let i = 1; i < tokens.length; i++) assert.ok(tokens[i] > tokens[i - 1]);
    // a opened the first generation long ago; it still sees the slot as it is now.
    assert.equal((await a.claim(other, owner(8), 60_000, Date.now())).claimed, false, 'a\'s own lease of the other key is still there');
    assert.equal(await a.release(other, owner(7), Date.now()), 'released');
    const next = await a.claim(key, owner(2), 30_000, Date.now());
    assert.ok(next.claimed && next.fencingToken > tokens[tokens.length - 1]);
  });

  it('processes killed with SIGKILL at arbitrary instants leave a readable store: no damage, tokens unique per name and still rising', async () => {
    const store = path.join(tmp.path, 'store');
    const keys = keysOfOneSlot(3);
    const env = childEnv(fileDriverEnv(store, PREFIX));
    const printed = new Map<string, number[]>(keys.map(k => [k, []]));
    const failures: string[] = [];
    const start = (): { child: ChildProcess; lines: () => number } => {
      const child = spawnTs('test/helpers/slotChurnWorker.ts', [keys.join(','), '300'], env);
      let count = 0;
      let partial = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        partial += chunk;
        const lines = partial.split('\n');
        partial = lines.pop()!;
        for (const line of lines) {
          const [key, token] = line.split(' ');
          printed.get(key)!.push(Number(token));
          count++;
        }
      });
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => failures.push(chunk));
      return { child, lines: () => count };
    };
    let workers = [start(), start(), start()];
    try {
      for (let kill = 0; kill < 12; kill++) {
        const victim = workers[kill % workers.length];
        const seen = victim.lines();
        // Kill while it works: after it claimed a few more times, at whatever instant that is.
        await waitFor(() => victim.lines() >= seen + 1 + (kill % 5), { timeoutMs: 60_000, description: 'the worker to make progress' });
        await killHard(victim.child);
        workers = workers.map(w => (w === victim ? start() : w));
      }
    } finally {
      await Promise.all(workers.map(w => killHard(w.child)));
    }
    assert.deepEqual(failures, [], 'no worker met an error (no damaged record, no unconfirmed write)');
    const driver = createFileDriver({ path: store, prefix: PREFIX });
    for (const key of keys) {
      const tokens = printed.get(key)!;
      assert.ok(tokens.length > 0);
      assert.equal(new Set(tokens).size, tokens.length, 'no token was handed out twice');
      // Past every TTL, the name is free and its next token is above all that were handed out.
      const after = await driver.claim(key, owner(99), 30_000, Date.now() + 60_000);
      assert.ok(after.claimed && after.fencingToken > Math.max(...tokens));
    }
    const { files } = walk(store);
    assert.deepEqual(files.filter(f => !/^\d{10}\.log$/.test(path.basename(f)) && !path.basename(f).startsWith('.tmp-')), [], 'only logs (and perhaps a dead writer\'s temporary file)');
  });
});
