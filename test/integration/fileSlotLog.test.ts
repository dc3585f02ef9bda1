import * as assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LockStorageError } from '../../src/core/errors';
import { createLockManager } from '../../src/core/leases';
import { keyDigest, namespaceDigest } from '../../src/core/names';
import { createFileDriver, FILE_LEASE_SLOTS } from '../../src/core/stores/file';
import { slotOf } from '../../src/core/stores/leaseSlots';
import { encodeRecord } from '../../src/core/stores/slotLogFraming';
import { childEnv, fileDriverEnv, killHard, runTs, spawnTs } from '../helpers/children';
import { assertHygienic } from '../helpers/hygiene';
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
const slotDir = (store: string, key: string) =>
  path.join(store, namespaceDigest(PREFIX), `s${slotOf(key, FILE_LEASE_SLOTS).toString(16).padStart(2, '0')}`);
const logsOf = (dir: string) =>
  fs
    .readdirSync(dir)
    .filter(f => /^\d{10}\.log$/.test(f))
    .sort();
const newestLog = (dir: string) => path.join(dir, logsOf(dir).pop()!);
/** A log's text (ASCII), and where its newest record starts (`\n` starts a record and occurs nowhere else). */
function readLog(file: string): { text: string; newest: number } {
  const text = fs.readFileSync(file, 'latin1');
  return { text, newest: text.lastIndexOf('\n@') };
}
const flipped = (text: string, at: number) => text.slice(0, at) + String.fromCharCode(text.charCodeAt(at) ^ 0x01) + text.slice(at + 1);
/** A new driver (a process that has read nothing yet) tries to claim `key`: it must fail with LockStorageError. */
async function assertDamageSeen(store: string, key: string, where: string): Promise<void> {
  const fresh = createFileDriver({ path: store, prefix: PREFIX });
  try {
    await assert.rejects(fresh.claim(key, owner(2), 30_000, Date.now()), (e: unknown) => {
      assert.ok(e instanceof LockStorageError, `${where}: ${String(e)}`);
      assertHygienic(e, [key, store, owner(1), owner(2)], where);
      return true;
    });
  } finally {
    await fresh.close();
  }
}

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
    fs.appendFileSync(
      path.join(dir, logsOf(dir).pop()!),
      encodeRecord('{"s":2,"k":"write","v":{"v":1,"counter":9,"leases":{}},"n":"0123456789ab"}').slice(0, 60),
    );
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
    assert.equal((await a.claim(other, owner(8), 60_000, Date.now())).claimed, false, "a's own lease of the other key is still there");
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
    assert.deepEqual(
      files.filter(f => !/^\d{10}\.log$/.test(path.basename(f)) && !path.basename(f).startsWith('.tmp-')),
      [],
      "only logs (and perhaps a dead writer's temporary file)",
    );
  });

  describe('damage is damage (issue #23)', () => {
    it('one changed byte anywhere in the newest complete record raises LockStorageError: the live lease is never read as free, and `lockstep run` issues no token twice', async () => {
      const store = path.join(tmp.path, 'store');
      const manager = createLockManager({ env: fileDriverEnv(store, PREFIX) });
      const held = await manager.acquire('held-name', { ttl: 600 });
      assert.ok(held.acquired);
      const key = keyDigest(PREFIX, 'held-name');
      const log = newestLog(slotDir(store, key));
      const { text, newest } = readLog(log);
      for (let at = newest; at < text.length; at++) {
        fs.writeFileSync(log, flipped(text, at), 'latin1');
        await assertDamageSeen(store, key, `byte ${at - newest} of the newest record`);
      }
      // Another process, through the command line: exit 5, CMD never runs, no second grant of the token.
      fs.writeFileSync(log, flipped(text, text.length - 10), 'latin1');
      const marker = path.join(tmp.path, 'ran');
      const run = await runTs(
        'src/cli/main.ts',
        [
          'run',
          'held-name',
          '--',
          process.execPath,
          '-e',
          `require("fs").writeFileSync(${JSON.stringify(marker)}, process.env.LOCKSTEP_FENCING_TOKEN)`,
        ],
        childEnv(fileDriverEnv(store, PREFIX)),
        60_000,
      );
      assert.equal(run.code, 5, `exit ${run.code}: ${run.stderr}`);
      assert.match(run.stderr, /damaged/);
      assert.equal(fs.existsSync(marker), false, 'CMD ran with a token although the lease is held');
      // Undamaged again, the lease is still held, and its holder releases it.
      fs.writeFileSync(log, text, 'latin1');
      assert.equal(await held.release(), true);
      await manager.close();
    });

    it('a newest record cut short at any byte (an append torn by a crash) reads as the state before it, and writes go on after it', async () => {
      const store = path.join(tmp.path, 'store');
      const driver = createFileDriver({ path: store, prefix: PREFIX });
      const [key] = keysOfOneSlot(1);
      const first = await driver.claim(key, owner(1), 600_000, Date.now());
      assert.ok(first.claimed);
      assert.equal(await driver.extend(key, owner(1), 600_000, Date.now()), true); // the record to tear
      await driver.close();
      const log = newestLog(slotDir(store, key));
      const { text, newest } = readLog(log);
      for (let cut = newest + 1; cut < text.length; cut++) {
        fs.writeFileSync(log, text.slice(0, cut), 'latin1');
        const fresh = createFileDriver({ path: store, prefix: PREFIX });
        assert.equal(
          (await fresh.claim(key, owner(2), 30_000, Date.now())).claimed,
          false,
          `cut ${cut - newest} bytes into the record: still held`,
        );
        await fresh.close();
      }
      // Writes after a torn record: it is skipped, by the writer and by every reader after.
      fs.writeFileSync(log, text.slice(0, newest + Math.floor((text.length - newest) / 2)), 'latin1');
      const writer = createFileDriver({ path: store, prefix: PREFIX });
      assert.equal(await writer.release(key, owner(1), Date.now()), 'released');
      const next = await writer.claim(key, owner(2), 30_000, Date.now());
      assert.ok(next.claimed && next.fencingToken === first.fencingToken + 1);
      const reader = createFileDriver({ path: store, prefix: PREFIX });
      assert.equal((await reader.claim(key, owner(3), 30_000, Date.now())).claimed, false, 'owner 2 holds it');
      await Promise.all([writer.close(), reader.close()]);
    });

    it('one changed byte in any earlier record raises LockStorageError too', async () => {
      const store = path.join(tmp.path, 'store');
      const driver = createFileDriver({ path: store, prefix: PREFIX });
      const [key, other] = keysOfOneSlot(2);
      for (let i = 0; i < 3; i++) {
        assert.ok((await driver.claim(key, owner(1), 30_000, Date.now())).claimed);
        assert.equal(await driver.release(key, owner(1), Date.now()), 'released');
      }
      assert.ok((await driver.claim(other, owner(1), 600_000, Date.now())).claimed);
      await driver.close();
      const log = newestLog(slotDir(store, key));
      const { text, newest } = readLog(log);
      const starts = [...text.matchAll(/\n@/g)].map(m => m.index!).filter(at => at < newest);
      assert.equal(starts.length, 7, 'a snapshot and six writes before the newest record');
      for (const start of starts) {
        const end = text.indexOf('\n@', start + 1);
        // A byte of the header (its length), and one of the body (a digit of a value that would still parse).
        for (const at of [start + 8, start + 32 + ((end - start - 32) >> 1)]) {
          fs.writeFileSync(log, flipped(text, at), 'latin1');
          await assertDamageSeen(store, key, `byte ${at - start} of the record at ${start}`);
        }
        const digit = start + 32 + text.slice(start + 32, end).search(/[0-9]/);
        fs.writeFileSync(log, text.slice(0, digit) + (text[digit] === '0' ? '1' : '0') + text.slice(digit + 1), 'latin1');
        await assertDamageSeen(store, key, `a digit of the record at ${start}`);
      }
    });

    it('a log of the earlier framing (no checksum) is carried into a checksummed one: its live lease stays held and tokens go on rising', async () => {
      const store = path.join(tmp.path, 'store');
      const [key] = keysOfOneSlot(1);
      const dir = slotDir(store, key);
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      const legacy = (record: unknown) => {
        const json = JSON.stringify(record);
        return `\n@${json.length}:${json}`;
      };
      const slot = { v: 1, counter: 5, leases: { [key]: { o: owner(1), e: Date.now() + 600_000 } } };
      fs.writeFileSync(
        path.join(dir, '0000000001.log'),
        legacy({ s: 0, k: 'snap', v: null }) + legacy({ s: 1, k: 'write', v: slot, n: '0123456789ab' }),
        { mode: 0o600 },
      );
      const driver = createFileDriver({ path: store, prefix: PREFIX });
      assert.equal((await driver.claim(key, owner(2), 30_000, Date.now())).claimed, false, 'the lease of the old log is still held');
      assert.deepEqual(logsOf(dir), ['0000000002.log'], 'the old log was sealed and replaced');
      assert.ok(fs.readFileSync(path.join(dir, '0000000002.log'), 'latin1').startsWith('\n@v2 '));
      assert.equal(await driver.release(key, owner(1), Date.now()), 'released');
      const next = await driver.claim(key, owner(2), 30_000, Date.now());
      assert.ok(next.claimed && next.fencingToken === 6);
      await driver.close();
      // A record of the earlier framing that is complete but does not parse is damage, not a torn append.
      fs.rmSync(dir, { recursive: true });
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      const broken = legacy({ s: 1, k: 'write', v: slot, n: '0123456789ab' }).replace('"counter"', '"counter\'');
      fs.writeFileSync(path.join(dir, '0000000001.log'), legacy({ s: 0, k: 'snap', v: null }) + broken, { mode: 0o600 });
      await assertDamageSeen(store, key, 'a broken record of the earlier framing');
    });
  });
});
