import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { LockBackendError } from '../../src/core/errors';
import { namespaceDigest } from '../../src/core/names';
import { createFileDriver } from '../../src/core/stores/file';
import { childEnv, fileDriverEnv, REPO_ROOT, TSX_NODE_ARGS } from '../helpers/children';
import { randomKey, randomOwner } from '../contract/driverContract';
import { useTempDir } from '../helpers/tempDir';

const fsModule = require('node:fs') as typeof import('node:fs');

/**
 * The file driver's lock-free compare-and-swap under the interleavings that matter, made
 * deterministic: a writer is frozen right after it published its revision (link or symlink returned) and
 * before it looks at the folder again, while another PROCESS writes on top of it. A correct driver
 * reports the frozen writer's write as done (others built on it); and a writer whose base was
 * overtaken and pruned before it published must be refused.
 */
describe('file driver: compare-and-swap races (deterministic interleavings)', function () {
  this.timeout(60_000);
  const tmp = useTempDir('lockstep-file-races');
  const PREFIX = 'races';
  const realLink = fsModule.linkSync;
  const realSymlink = fsModule.symlinkSync;
  const realWrite = fsModule.writeSync;
  let beforeNextLink: (() => void) | undefined;
  let afterNextLink: (() => void) | undefined;

  /**
   * Runs the hooks around the driver's publication of a revision, whichever call it uses: link or
   * symlink for a record, the append (writeSync) to a lease slot's log.
   */
  function hooked<A extends unknown[], R>(real: (...args: A) => R) {
    return (...args: A): R => {
      const before = beforeNextLink;
      beforeNextLink = undefined;
      before?.();
      const result = real(...args);
      const after = afterNextLink;
      afterNextLink = undefined;
      after?.();
      return result;
    };
  }

  beforeEach(() => {
    fsModule.linkSync = hooked(realLink) as typeof fsModule.linkSync;
    fsModule.symlinkSync = hooked(realSymlink) as typeof fsModule.symlinkSync;
    fsModule.writeSync = hooked(realWrite) as typeof fsModule.writeSync;
  });
  afterEach(() => {
    fsModule.linkSync = realLink;
    fsModule.symlinkSync = realSymlink;
    fsModule.writeSync = realWrite;
    beforeNextLink = undefined;
    afterNextLink = undefined;
  });

  /** Runs raw driver operations in another process, synchronously (this process stays frozen). */
  function otherProcess(ops: object[]): unknown[] {
    const out = execFileSync(process.execPath, [...TSX_NODE_ARGS, path.join(REPO_ROOT, 'test/helpers/driverOps.ts'), JSON.stringify(ops)], {
      cwd: REPO_ROOT,
      env: childEnv(fileDriverEnv(tmp.path, PREFIX)),
      encoding: 'utf8',
      timeout: 30_000,
    });
    return JSON.parse(out) as unknown[];
  }

  const driver = () => createFileDriver({ path: tmp.path, prefix: PREFIX });

  for (const writesOnTop of [1, 2, 5, 9]) {
    it(`a release stays "released" when another process wrote ${writesOnTop} revision(s) on top before the releaser looked again`, async () => {
      const a = driver();
      const key = randomKey();
      const owner = randomOwner();
      assert.ok((await a.claim(key, owner, 30_000, Date.now())).claimed);
      const others = Array.from({ length: Math.ceil(writesOnTop / 2) }, () => randomOwner());
      const ops = others
        .flatMap(o => [
          { op: 'claim', key, owner: o, ttlMs: 30_000 },
          { op: 'release', key, owner: o },
        ])
        .slice(0, writesOnTop);
      let results: unknown[] = [];
      afterNextLink = () => {
        results = otherProcess(ops);
      };
      assert.equal(await a.release(key, owner, Date.now()), 'released');
      // The other process really wrote on top of the release.
      assert.deepEqual(
        results.map(r => (typeof r === 'string' ? r : (r as { claimed: boolean }).claimed)),
        ops.map(op => (op.op === 'claim' ? true : 'released')),
      );
      // And the store agrees with everyone: the last writer's state is current.
      const last = ops[ops.length - 1];
      const probe = await a.claim(key, randomOwner(), 30_000, Date.now());
      assert.equal(probe.claimed, last.op === 'release', "the other process's lease is intact");
    });
  }

  for (const writesOnTop of [1, 3, 9]) {
    it(`a compare-and-swap is reported as written when another process built ${writesOnTop} write(s) on it (no double application)`, async () => {
      const a = driver();
      const key = randomKey();
      const base = await a.compareAndSwap(key, null, { n: 0 }, { summary: 'create' });
      assert.ok(base.ok);
      let results: unknown[] = [];
      afterNextLink = () => {
        results = otherProcess(Array.from({ length: writesOnTop }, () => ({ op: 'increment', key })));
      };
      const mine = await a.compareAndSwap(key, base.revision, { n: 1 }, { summary: 'mine' });
      assert.deepEqual(
        results.map(r => (r as { ok: boolean; n: number }).n),
        Array.from({ length: writesOnTop }, (_, i) => i + 2),
        "the other process read this process's write",
      );
      assert.equal(mine.ok, true, 'the write happened (others built on it), so it must be reported as done');
      assert.deepEqual((await a.read(key))?.value, { n: 1 + writesOnTop });
    });
  }

  it('refuses a write whose base was overtaken and pruned before it was published (stale writer)', async () => {
    const a = driver();
    const b = driver();
    const key = randomKey();
    const first = await a.compareAndSwap(key, null, { n: 0 }, { summary: 'create' });
    assert.ok(first.ok);
    const seen = await a.read(key);
    assert.ok(seen);
    // Others move on by three revisions, so the revision `a` would publish existed and was pruned.
    let revision = first.revision;
    for (let n = 1; n <= 3; n++) {
      const w = await b.compareAndSwap(key, revision, { n }, { summary: 'other' });
      assert.ok(w.ok);
      revision = w.revision;
    }
    assert.deepEqual(await a.compareAndSwap(key, seen.revision, { n: 100 }, { summary: 'stale' }), { ok: false });
    assert.deepEqual(await a.read(key), { value: { n: 3 }, revision });
  });

  it('refuses a stale writer whose base was overtaken many times', async () => {
    const a = driver();
    const b = driver();
    const key = randomKey();
    const first = await a.compareAndSwap(key, null, { n: 0 }, { summary: 'create' });
    assert.ok(first.ok);
    let revision = first.revision;
    for (let n = 1; n <= 40; n++) {
      const w = await b.compareAndSwap(key, revision, { n }, { summary: 'other' });
      assert.ok(w.ok);
      revision = w.revision;
    }
    assert.deepEqual(await a.compareAndSwap(key, first.revision, { n: 100 }, { summary: 'stale' }), { ok: false });
    assert.deepEqual((await a.read(key))?.value, { n: 40 });
  });

  it('a writer overtaken between its last check and publishing a stale revision, sees it lost, and withdraws it', async () => {
    const a = driver();
    const key = randomKey();
    const first = await a.compareAndSwap(key, null, { n: 0 }, { summary: 'create' });
    assert.ok(first.ok);
    beforeNextLink = () => {
      otherProcess([1, 2, 3].map(() => ({ op: 'increment', key })));
    };
    assert.deepEqual(await a.compareAndSwap(key, first.revision, { n: 100 }, { summary: 'stale' }), { ok: false });
    assert.deepEqual((await a.read(key))?.value, { n: 3 });
    const files = fsModule.readdirSync(cellDirOf(key));
    assert.ok(files.length <= 2, `withdrawn and pruned: ${files.join(', ')}`);
  });

  it('a writer overtaken by more revisions than the lineage records reports a retryable backend error, never success', async () => {
    const a = driver();
    const key = randomKey();
    const first = await a.compareAndSwap(key, null, { n: 0 }, { summary: 'create' });
    assert.ok(first.ok);
    beforeNextLink = () => {
      otherProcess(Array.from({ length: 40 }, () => ({ op: 'increment', key })));
    };
    await assert.rejects(
      a.compareAndSwap(key, first.revision, { n: 100 }, { summary: 'stale' }),
      (e: unknown) => e instanceof LockBackendError && e.retryable,
    );
    assert.deepEqual((await a.read(key))?.value, { n: 40 });
  });

  function cellDirOf(key: string): string {
    const cell = `r${key}`;
    return path.join(tmp.path, namespaceDigest(PREFIX), cell.slice(1, 3), cell);
  }
});
