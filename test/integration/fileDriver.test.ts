import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { decodeLinkTarget } from '../../src/core/stores/linkTarget';
import * as net from 'node:net';
import * as path from 'node:path';
import { LockBackendError, LockConfigurationError, LockStorageError } from '../../src/core/errors';
import { createLockManager, type LockManager } from '../../src/core/leases';
import { keyDigest, namespaceDigest } from '../../src/core/names';
import { createFileDriver, FILE_LEASE_SLOTS } from '../../src/core/stores/file';
import { slotOf } from '../../src/core/stores/leaseSlots';
import { childEnv, fileDriverEnv, firstJsonLine, killHard, runTs, spawnTs } from '../helpers/children';
import type { ContendResult } from '../helpers/contendWorker';
import { crowdedPage } from '../helpers/crowdedPage';
import { assertHygienic } from '../helpers/hygiene';
import { storeTexts } from '../helpers/storeTexts';
import { useTempDir, walk } from '../helpers/tempDir';
import { waitFor } from '../helpers/waitFor';

/**
 * The file driver with real separate Node processes on this machine's filesystem. Layout facts
 * used here come from the header comment of src/core/stores/file.ts:
 * leases in 8 slots, each an append-only log `<root>/<sha256(namespace)>/s<2 hex>/<10-digit generation>.log`.
 */
const LEASE_LOG = /^\d{10}\.log$/;

/** The slot cell that holds a name's lease (stores/leaseSlots.ts). */
function leaseCellDir(root: string, prefix: string, name: string): string {
  return path.join(root, namespaceDigest(prefix), `s${slotOf(keyDigest(prefix, name), FILE_LEASE_SLOTS).toString(16).padStart(2, '0')}`);
}

/** The current log of a name's slot. */
function currentRevisionFile(root: string, prefix: string, name: string): string {
  const dir = leaseCellDir(root, prefix, name);
  const logs = fs
    .readdirSync(dir)
    .filter(f => LEASE_LOG.test(f))
    .sort();
  assert.ok(logs.length > 0, 'the lease has a record');
  return path.join(dir, logs[logs.length - 1]);
}

/** A revision's text, whether it is published as a symbolic link (small records) or a file. */
function readRevision(file: string): string {
  return fs.lstatSync(file).isSymbolicLink() ? (decodeLinkTarget(fs.readlinkSync(file)) ?? '') : fs.readFileSync(file, 'utf8');
}

function replaceRevision(file: string, text: string): void {
  fs.rmSync(file);
  fs.writeFileSync(file, text);
}

function fileManager(root: string, prefix: string): LockManager {
  return createLockManager({ env: fileDriverEnv(root, prefix) });
}

describe('file driver (separate processes, real filesystem)', function () {
  this.timeout(120_000);
  const tmp = useTempDir('lockstep-file-it');
  const managers: LockManager[] = [];
  const manager = (root: string, prefix: string) => {
    const m = fileManager(root, prefix);
    managers.push(m);
    return m;
  };
  afterEach(async () => {
    await Promise.all(managers.splice(0).map(m => m.close()));
  });

  it('8 processes × 25 iterations on one name: never two inside, fencing tokens unique and increasing in acquisition order', async () => {
    const store = path.join(tmp.path, 'store');
    const shared = path.join(tmp.path, 'shared');
    fs.mkdirSync(shared);
    const processes = 8;
    const iterations = 25;
    const env = childEnv(fileDriverEnv(store, 'contention'));
    const outs = Array.from({ length: processes }, (_, i) => path.join(tmp.path, `result-${i}.json`));
    const gate = path.join(tmp.path, 'go');
    const runs = Promise.all(
      outs.map(out =>
        runTs(
          'test/helpers/contendWorker.ts',
          // Each worker pauses between its leases: an acquire+release takes well under a millisecond, so a
          // worker that asked again at once would take the lease straight back from its waiting peers.
          [
            '--name',
            'hot-name',
            '--iterations',
            String(iterations),
            '--ttl',
            '30',
            '--wait',
            '60',
            '--shared',
            shared,
            '--out',
            out,
            '--gate',
            gate,
            '--between-ms',
            '10',
          ],
          env,
          110_000,
        ),
      ),
    );
    // Start every worker at once, so that they really contend.
    await waitFor(() => fs.readdirSync(tmp.path).filter(f => f.startsWith('go.ready-')).length === processes, {
      timeoutMs: 60_000,
      description: 'all workers ready',
    });
    fs.writeFileSync(gate, '');
    const finished = await runs;
    const results = outs.map(out => JSON.parse(fs.readFileSync(out, 'utf8')) as ContendResult);
    for (const [i, run] of finished.entries())
      assert.equal(run.code, 0, `worker ${i} exited ${run.code}: ${run.stderr} ${JSON.stringify(results[i].errors)}`);

    assert.deepEqual(
      results.flatMap(r => r.errors),
      [],
    );
    assert.equal(
      results.reduce((s, r) => s + r.violations, 0),
      0,
      'two processes were inside at once',
    );
    assert.equal(
      results.reduce((s, r) => s + r.busy, 0),
      0,
      'a 60 s wait ran out',
    );
    assert.equal(
      results.reduce((s, r) => s + r.releasedFalse, 0),
      0,
      'a release found its lease gone',
    );
    assert.equal(
      results.reduce((s, r) => s + r.acquisitions, 0),
      processes * iterations,
    );
    assert.equal(new Set(results.map(r => r.pid)).size, processes);
    // The shared counter lost no update, so the critical sections were strictly sequential.
    assert.equal(Number(fs.readFileSync(path.join(shared, 'counter'), 'utf8')), processes * iterations);

    const entries = results.flatMap(r => r.entries).sort((a, b) => a.seq - b.seq);
    assert.deepEqual(
      entries.map(e => e.seq),
      Array.from({ length: processes * iterations }, (_, i) => i + 1),
    );
    for (let i = 1; i < entries.length; i++) {
      assert.ok(
        entries[i].fencingToken > entries[i - 1].fencingToken,
        `acquisition ${entries[i].seq} got token ${entries[i].fencingToken} after ${entries[i - 1].fencingToken}`,
      );
    }
    // Real contention happened: the lease changed hands between processes again and again.
    const owner = new Map(results.flatMap(r => r.entries.map(e => [e.seq, r.pid] as const)));
    const handovers = entries.filter((e, i) => i > 0 && owner.get(e.seq) !== owner.get(entries[i - 1].seq)).length;
    assert.ok(handovers >= processes * 2, `only ${handovers} handovers between processes`);
  });

  it('a holder killed with SIGKILL blocks the name until its TTL, then another process acquires it', async () => {
    const store = path.join(tmp.path, 'store');
    const holder = spawnTs('test/helpers/holdWorker.ts', ['--name', 'crashy', '--ttl', '2'], childEnv(fileDriverEnv(store, 'crash')));
    let held: { acquired: boolean; fencingToken: number; expiresAt: number };
    try {
      held = await firstJsonLine(holder);
    } finally {
      await killHard(holder);
    }
    assert.equal(held.acquired, true);
    assert.equal(holder.signalCode, 'SIGKILL');

    const m = manager(store, 'crash');
    const attempts: { at: number; acquired: boolean }[] = [];
    const winner = await waitFor(
      async () => {
        const at = Date.now();
        const handle = await m.acquire('crashy', { ttl: 30 });
        attempts.push({ at, acquired: handle.acquired });
        return handle.acquired ? handle : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 50, description: "acquisition after the dead holder's TTL" },
    );

    const before = attempts.filter(a => a.at < held.expiresAt);
    assert.ok(before.length > 0, "no attempt was made before the dead holder's lease expired: the test proved nothing");
    assert.ok(
      before.every(a => !a.acquired),
      "acquired before the dead holder's lease expired",
    );
    assert.ok(attempts[attempts.length - 1].at >= held.expiresAt);
    assert.ok(winner.fencingToken! > held.fencingToken);
    assert.equal(await winner.release(), true);
  });

  it('distinct names leave nothing behind: the store stays bounded by its slots, with no mutex or lock files', async () => {
    const store = path.join(tmp.path, 'store');
    const m = manager(store, 'many');
    const entries = () => {
      const { files, dirs } = walk(store);
      return { files, dirs, count: files.length + dirs.length };
    };
    const cycle = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const handle = await m.acquire(`dynamic-name-${i}`, { ttl: 30 });
        assert.ok(handle.acquired);
        assert.equal(await handle.release(), true);
      }
    };
    await cycle(0, 300);
    const after300 = entries();
    await cycle(300, 1500);
    const after1500 = entries();
    assert.ok(
      after1500.count <= after300.count + FILE_LEASE_SLOTS,
      `${after300.count} entries after 300 names, ${after1500.count} after 1500: bounded, not per name`,
    );
    assert.ok(after1500.count <= 1 + FILE_LEASE_SLOTS * 3, `${after1500.count} entries: the namespace, 8 slots and at most 2 logs each`);
    const allocated = [...after1500.files, ...after1500.dirs].reduce((sum, f) => sum + fs.lstatSync(f).blocks * 512, 0);
    assert.ok(allocated <= 1024 * 1024, `${allocated} bytes allocated`);
    assert.deepEqual(
      after1500.files.filter(f => /(\.lock|\.lck|mutex|stripe)/i.test(path.basename(f))),
      [],
      'no mutex files at all',
    );
    assert.deepEqual(
      after1500.files.filter(f => !LEASE_LOG.test(path.basename(f))),
      [],
      "only the slots' logs remain (no temporary files)",
    );
  });

  it('fencing tokens stay strictly increasing per name across release, expiry and a crash, with other names in between', async () => {
    const store = path.join(tmp.path, 'store');
    const driver = createFileDriver({ path: store, prefix: 'tokens' });
    const key = keyDigest('tokens', 'counted');
    // Names of the same slot share its counter; they must not disturb the order of `counted`.
    const sameSlot = Array.from({ length: 400 }, (_, i) => keyDigest('tokens', `other-${i}`))
      .filter(k => slotOf(k, FILE_LEASE_SLOTS) === slotOf(key, FILE_LEASE_SLOTS))
      .slice(0, 3);
    const owner = (n: number) => n.toString(16).padStart(64, '0');
    const tokens: number[] = [];
    const claim = async (o: string, now: number) => {
      const c = await driver.claim(key, o, 1_000, now);
      assert.ok(c.claimed);
      tokens.push(c.fencingToken);
    };
    const now = Date.now();
    await claim(owner(1), now);
    assert.equal(await driver.release(key, owner(1), now), 'released');
    for (const other of sameSlot) {
      await driver.claim(other, owner(9), 1_000, now);
      await driver.release(other, owner(9), now);
    }
    await claim(owner(2), now); // then left to expire
    await claim(owner(3), now + 2_000); // expiry
    // A holder "crashes" (never releases), and a fresh process (a new driver) takes over after expiry.
    const fresh = createFileDriver({ path: store, prefix: 'tokens' });
    const late = await fresh.claim(key, owner(4), 1_000, now + 4_000);
    assert.ok(late.claimed);
    tokens.push(late.fencingToken);
    for (let i = 1; i < tokens.length; i++) assert.ok(tokens[i] > tokens[i - 1], `tokens ${tokens.join(', ')} increase`);
  });

  it("8 clients in one process retrying tryAcquire never starve the holder's own network round trip: every client acquires", async () => {
    // A real TCP echo server: the critical section waits for one round trip, as a holder that talks
    // to a service would. A driver that resolved without letting I/O run would starve it forever.
    const server = net.createServer(socket => socket.pipe(socket));
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const store = path.join(tmp.path, 'store');
    const acquisitions = new Array<number>(8).fill(0);
    let inside = 0;
    let overlaps = 0;
    const roundTrip = (socket: net.Socket) =>
      new Promise<void>(resolve => {
        socket.once('data', () => resolve());
        socket.write('x');
      });
    const client = async (index: number) => {
      const m = manager(store, 'starve');
      const socket = net.connect(port, '127.0.0.1');
      await new Promise(resolve => socket.once('connect', resolve));
      try {
        while (acquisitions.some(n => n < 3)) {
          const handle = await m.acquire('shared', { ttl: 30, wait: 0 });
          if (!handle.acquired) continue;
          if (++inside > 1) overlaps++;
          await roundTrip(socket);
          inside--;
          acquisitions[index]++;
          assert.equal(await handle.release(), true);
        }
      } finally {
        socket.destroy();
      }
    };
    try {
      await Promise.all(acquisitions.map((_, i) => client(i)));
    } finally {
      server.close();
    }
    assert.equal(overlaps, 0);
    assert.ok(
      acquisitions.every(n => n >= 3),
      `acquisitions per client: ${acquisitions.join(', ')}`,
    );
  });

  it('keeps the record of a busy name bounded: many acquisitions of one name leave at most 2 revision files', async () => {
    const store = path.join(tmp.path, 'store');
    const m = manager(store, 'busy');
    for (let i = 0; i < 50; i++) assert.equal(await (await m.acquire('one-name')).release(), true);
    assert.ok(fs.readdirSync(leaseCellDir(store, 'busy', 'one-name')).length <= 2);
  });

  describe('a damaged record', () => {
    /** Replaces the current revision (a symbolic link or a file) with a file holding `text`. */
    const replaceWith = (text: string) => (file: string) => {
      fs.rmSync(file);
      fs.writeFileSync(file, text);
    };
    const damages: [string, (file: string) => void][] = [
      ['garbage bytes', replaceWith('garbage \x00\xff not json')],
      ['an empty file', replaceWith('')],
      ['a truncated record', file => replaceWith(readRevision(file).slice(0, 20))(file)],
      ['valid JSON of the wrong shape', replaceWith('{"hello":"world"}')],
      [
        'a well-formed revision holding an invalid lease slot (negative counter)',
        replaceWith('{"l":["0123456789ab"],"v":{"v":1,"counter":-1,"leases":{}}}'),
      ],
      ['an oversized record', replaceWith(`{"pad":"${'x'.repeat(1024 * 1024 + 10)}"}`)],
      [
        'a symbolic link to garbage',
        file => {
          fs.rmSync(file);
          fs.symlinkSync('not json at all', file);
        },
      ],
      [
        'a revision replaced by a folder',
        file => {
          fs.rmSync(file);
          fs.mkdirSync(file);
        },
      ],
    ];
    for (const [label, damage] of damages) {
      it(`(${label}) raises LockStorageError, again and again, and never reads as free`, async () => {
        const store = path.join(tmp.path, 'store');
        const m = manager(store, 'damage');
        assert.equal(await (await m.acquire('damaged-name')).release(), true);
        damage(currentRevisionFile(store, 'damage', 'damaged-name'));
        for (let i = 0; i < 3; i++) {
          await assert.rejects(m.acquire('damaged-name', { wait: 0.2 }), (e: unknown) => {
            assert.ok(e instanceof LockStorageError, String(e));
            assert.equal(e.code, 'storage');
            assertHygienic(e, ['damaged-name', keyDigest('damage', 'damaged-name')], label);
            return true;
          });
        }
        // A fresh process sees the same.
        await assert.rejects(manager(store, 'damage').acquire('damaged-name'), LockStorageError);
        // Other names are unaffected.
        assert.ok((await m.acquire('healthy-name')).acquired);
      });
    }

    it("one changed byte anywhere in a container record's revision (symbolic link or file) raises LockStorageError for a reader that has not read it before", async () => {
      const store = path.join(tmp.path, 'store');
      const writer = createFileDriver({ path: store, prefix: 'damage' });
      const small = keyDigest('damage', 'small-record');
      const large = keyDigest('damage', 'large-record');
      assert.ok((await writer.compareAndSwap(small, null, { grant: 3, holder: 'ana', queue: [] }, { summary: 'small' })).ok);
      assert.ok((await writer.compareAndSwap(large, null, { grant: 7, pad: 'x'.repeat(3000) }, { summary: 'large' })).ok);
      await writer.close();
      const revisionOf = (key: string) => {
        const dir = path.join(store, namespaceDigest('damage'), key.slice(0, 2), `r${key}`);
        return path.join(
          dir,
          fs
            .readdirSync(dir)
            .filter(f => /^\d{16}\.json$/.test(f))
            .sort()
            .pop()!,
        );
      };
      const flip = (text: string, at: number) => text.slice(0, at) + String.fromCharCode(text.charCodeAt(at) ^ 0x01) + text.slice(at + 1);
      const assertDamaged = async (key: string, where: string) => {
        const reader = createFileDriver({ path: store, prefix: 'damage' });
        try {
          await assert.rejects(reader.read(key), (e: unknown) => {
            assert.ok(e instanceof LockStorageError, `${where}: ${String(e)}`);
            assertHygienic(e, [key, store, 'ana'], where);
            return true;
          });
        } finally {
          await reader.close();
        }
      };
      // A small record is a symbolic link's target: every byte of it.
      const link = revisionOf(small);
      assert.ok(fs.lstatSync(link).isSymbolicLink());
      const target = fs.readlinkSync(link);
      for (let at = 0; at < target.length; at++) {
        fs.rmSync(link);
        fs.symlinkSync(flip(target, at), link);
        await assertDamaged(small, `byte ${at} of a record in a symbolic link`);
      }
      // A large record is a file: its first bytes, a byte of its value, its last byte.
      const file = revisionOf(large);
      assert.ok(fs.lstatSync(file).isFile());
      const text = fs.readFileSync(file, 'utf8');
      for (const at of [0, 1, 2, 5, 10, 11, text.indexOf('"grant":7') + 8, text.length >> 1, text.length - 1]) {
        fs.writeFileSync(file, flip(text, at));
        await assertDamaged(large, `byte ${at} of a record in a file`);
      }
      fs.writeFileSync(file, text);
      const reader = createFileDriver({ path: store, prefix: 'damage' });
      assert.deepEqual((await reader.read(large))?.value, { grant: 7, pad: 'x'.repeat(3000) }, 'undamaged, it reads again');
      await reader.close();
    });

    it('keeps a crowded page in one revision file of at most 64 KiB, and reads it back exactly', async () => {
      const store = path.join(tmp.path, 'crowded');
      const writer = createFileDriver({ path: store, prefix: 'crowded' });
      const key = keyDigest('crowded', 'crowded-record');
      const page = crowdedPage();
      assert.ok((await writer.compareAndSwap(key, null, page, { summary: 'crowded' })).ok);
      await writer.close();
      const dir = path.join(store, namespaceDigest('crowded'), key.slice(0, 2), `r${key}`);
      const files = fs.readdirSync(dir).filter(f => /^\d{16}\.json$/.test(f));
      assert.equal(files.length, 1);
      const bytes = fs.statSync(path.join(dir, files[0])).size;
      assert.ok(bytes <= 64 * 1024, `stored in ${bytes} bytes`);
      // The leak checks (storeTexts) read through the packing: compressed bytes hide what they hold.
      assert.ok(!fs.readFileSync(path.join(dir, files[0]), 'latin1').includes('petitioner-7@example.com'));
      assert.ok(storeTexts(store).some(text => text.includes('petitioner-7@example.com')));
      const reader = createFileDriver({ path: store, prefix: 'crowded' });
      assert.equal(JSON.stringify((await reader.read(key))?.value), JSON.stringify(page));
      await reader.close();
    });

    it("makes the holder's release fail loudly instead of pretending", async () => {
      const store = path.join(tmp.path, 'store');
      const m = manager(store, 'damage');
      const handle = await m.acquire('held-then-damaged');
      replaceRevision(currentRevisionFile(store, 'damage', 'held-then-damaged'), '{');
      await assert.rejects(handle.release(), LockStorageError);
    });

    it("a write that expects no record (a page's creation, an adopt) is refused over a record, damaged or not, and leaves no revision behind", async () => {
      const store = path.join(tmp.path, 'store');
      const key = keyDigest('damage', 'created-twice');
      const dir = path.join(store, namespaceDigest('damage'), key.slice(0, 2), `r${key}`);
      const writer = createFileDriver({ path: store, prefix: 'damage' });
      let written = await writer.compareAndSwap(key, null, { grant: 3 }, { summary: 'create' });
      for (const grant of [4, 5]) {
        assert.ok(written.ok);
        written = await writer.compareAndSwap(key, written.revision, { grant }, { summary: 'write' });
      }
      await writer.close();
      const files = () => fs.readdirSync(dir).sort();
      const kept = files();
      assert.deepEqual(kept, ['0000000000000002.json', '0000000000000003.json']);

      const creator = createFileDriver({ path: store, prefix: 'damage' });
      try {
        assert.equal((await creator.compareAndSwap(key, null, { grant: 7 }, { summary: 'adopt' })).ok, false);
        assert.deepEqual(files(), kept);
        replaceRevision(path.join(dir, kept[1]), '2:00000000:{"l":[');
        assert.equal((await creator.compareAndSwap(key, null, { grant: 7 }, { summary: 'adopt' })).ok, false);
        assert.deepEqual(files(), kept, 'nothing is published below a damaged revision');
        await assert.rejects(creator.read(key), LockStorageError);
        // The operator removes the damaged revision: what remains is the page's own older revision, not an adopt refused earlier.
        fs.rmSync(path.join(dir, kept[1]));
        const reader = createFileDriver({ path: store, prefix: 'damage' });
        assert.deepEqual((await reader.read(key))?.value, { grant: 4 });
        await reader.close();
      } finally {
        await creator.close();
      }
    });
  });

  it('two namespaces are isolated: the same name is held independently, across processes', async () => {
    const store = path.join(tmp.path, 'store');
    const holder = spawnTs('test/helpers/holdWorker.ts', ['--name', 'same-name', '--ttl', '60'], childEnv(fileDriverEnv(store, 'team-a')));
    try {
      const held = await firstJsonLine<{ acquired: boolean; fencingToken: number }>(holder);
      assert.equal(held.acquired, true);
      assert.equal((await manager(store, 'team-a').acquire('same-name')).acquired, false, 'held in team-a');
      const b = await manager(store, 'team-b').acquire('same-name');
      assert.equal(b.acquired, true, 'free in team-b');
      assert.equal(b.fencingToken, 1, 'team-b has its own counter');
      assert.equal(await b.release(), true);
      assert.equal((await manager(store, 'team-a').acquire('same-name')).acquired, false, "team-b's release left team-a alone");
    } finally {
      await killHard(holder);
    }
    const namespaces = fs.readdirSync(store).sort();
    assert.deepEqual(namespaces, [namespaceDigest('team-a'), namespaceDigest('team-b')].sort());
  });

  describe('the storage root', () => {
    it('refuses a storage root that is a symbolic link, and creates nothing through it', async () => {
      const real = path.join(tmp.path, 'real');
      fs.mkdirSync(real, { mode: 0o700 });
      const link = path.join(tmp.path, 'link');
      fs.symlinkSync(real, link);
      await assert.rejects(manager(link, 'p').acquire('x'), (e: unknown) => e instanceof LockConfigurationError && e.setting === 'path');
      assert.deepEqual(fs.readdirSync(real), []);
    });

    it('refuses a storage root below a symbolic link, and creates nothing through it', async () => {
      const real = path.join(tmp.path, 'real');
      fs.mkdirSync(real, { mode: 0o700 });
      fs.symlinkSync(real, path.join(tmp.path, 'link'));
      await assert.rejects(
        manager(path.join(tmp.path, 'link', 'deeper', 'store'), 'p').acquire('x'),
        (e: unknown) => e instanceof LockConfigurationError && e.setting === 'path',
      );
      assert.deepEqual(fs.readdirSync(real), [], "folders were created in the link's target");
    });

    it('creates folders 0700 and files 0600 (slot logs, large records); records in symbolic links are only inside those folders', async () => {
      const store = path.join(tmp.path, 'private', 'store');
      const m = manager(store, 'modes');
      const held = await m.acquire('mode-check');
      const other = await m.acquire('mode-check-2');
      await other.release();
      // A large container-style record goes to a regular file.
      const driver = createFileDriver({ path: store, prefix: 'modes' });
      assert.ok((await driver.compareAndSwap(keyDigest('modes', 'big'), null, { pad: 'x'.repeat(5000) }, { summary: 'big' })).ok);
      const { files, dirs } = walk(path.join(tmp.path, 'private'));
      assert.ok(files.length >= 2 && dirs.length >= 4);
      for (const dir of dirs) assert.equal(fs.statSync(dir).mode & 0o777, 0o700, dir);
      const regular = files.filter(f => fs.lstatSync(f).isFile());
      assert.ok(regular.length >= 1, 'the large record is a regular file');
      for (const file of regular) assert.equal(fs.lstatSync(file).mode & 0o777, 0o600, file);
      for (const file of files) assert.ok(fs.lstatSync(file).isFile() || fs.lstatSync(file).isSymbolicLink(), file);
      await held.release();
    });

    it("reports an unusable storage root as a backend error without the path's lock digests", async () => {
      const file = path.join(tmp.path, 'a-file');
      fs.writeFileSync(file, '');
      await assert.rejects(manager(path.join(file, 'store'), 'p').acquire('unusable-root'), (e: unknown) => {
        assert.ok(e instanceof LockBackendError, String(e));
        assertHygienic(e, ['unusable-root', keyDigest('p', 'unusable-root')], 'unusable root');
        return true;
      });
    });

    it('reports a broken lease folder as a typed error that leaks no name, key digest or token', async () => {
      const store = path.join(tmp.path, 'store');
      const m = manager(store, 'broken');
      const handle = await m.acquire('broken-folder');
      const token = handle.ownerToken();
      const dir = leaseCellDir(store, 'broken', 'broken-folder');
      fs.rmSync(dir, { recursive: true });
      fs.writeFileSync(dir, 'not a folder'); // the cell folder is now a plain file
      const error = await handle.release().then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof LockBackendError || error instanceof LockStorageError, String(error));
      assertHygienic(error, ['broken-folder', keyDigest('broken', 'broken-folder'), token], 'broken folder');
    });
  });
});
