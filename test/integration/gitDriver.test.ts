// openDriver loads a driver with import(), which needs tsx's ESM hook: .mocharc.integration.json
// registers it, a plain `mocha --require tsx/cjs` does not (loading it twice is a no-op).
import 'tsx/esm';
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openDriver } from '../../src/core/drivers';
import { exitCodeFor, LockBackendError, LockConfigurationError, LockStorageError } from '../../src/core/errors';
import { createLockManager } from '../../src/core/leases';
import { resolveConfig } from '../../src/core/config';
import { createGitDriver, type GitDriver } from '../../src/core/stores/git/gitDriver';
import { lockRef } from '../../src/core/stores/git/gitRefs';
import { describeDriverContract, randomKey, randomOwner } from '../contract/driverContract';
import { git, gitInput, makeGitWorld, openGitDriver, remoteLog, type GitWorld } from '../helpers/gitRemote';
import { useTempDir } from '../helpers/tempDir';
import { waitFor } from '../helpers/waitFor';
import { runUntil, seededRandom } from '../helpers/simulatedPolls';
import { HOUR, ManualClock, MINUTE } from '../../src/core/clock';
import { GIT_POLL_PACE, IDLE_INTEREST } from '../../src/core/stores/pollPace';

const PREFIX = 'lockstep-test';
/** A driver's history of `key` from the revision a read fetched, and the `cat-file` processes only that history read ran. */
async function readCounted(driver: GitDriver, key: string, spawned: string[]) {
  const { revision } = (await driver.read(key)) ?? assert.fail('no record');
  const before = spawned.length;
  const entries = await driver.readHistory(key, Infinity, revision);
  return { entries, catFiles: spawned.slice(before).filter(s => s === 'cat-file').length };
}
const meta = (summary: string) => ({ summary });

// The shared contract on a real bare remote; driver instances alternate between two clones.
describe('git driver: shared contract', () => {
  const root = useTempDir('lockstep-git-contract', 'suite');
  let world: GitWorld | undefined;
  let next = 0;
  describeDriverContract('git', async () => {
    world ??= makeGitWorld(root.path, 2);
    return openGitDriver(world.clones[next++ % 2], { pollIntervalMs: 50 });
  });
});

describe('git driver', function () {
  this.timeout(60_000);
  const tmp = useTempDir('lockstep-git');
  let world: GitWorld;
  const open: GitDriver[] = [];
  const driverIn = (clone: number, options: Parameters<typeof openGitDriver>[1] = {}) => {
    const driver = openGitDriver(world.clones[clone], options);
    open.push(driver);
    return driver;
  };

  beforeEach(() => {
    world = makeGitWorld(tmp.path, 2);
  });
  /** The files in which a clone keeps parsed history entries between processes (parsedHistory.ts). */
  const keptFiles = (clone: number) => {
    const dir = path.join(world.clones[clone], '.git', 'lockstep');
    return fs.existsSync(dir)
      ? fs
          .readdirSync(dir)
          .filter(f => /^history-[0-9a-f]{32}\.json$/.test(f))
          .map(f => path.join(dir, f))
      : [];
  };
  const forgetKept = (clone: number) => {
    for (const file of keptFiles(clone)) fs.rmSync(file);
  };
  afterEach(async () => {
    await Promise.all(open.splice(0).map(d => d.close()));
  });

  describe('compare-and-swap across clones', () => {
    it('lets exactly one of two clones win from the same base; the loser re-reads the winner', async () => {
      const [a, b] = [driverIn(0), driverIn(1)];
      const key = randomKey();
      const base = await a.compareAndSwap(key, null, { n: 0 }, meta('create'));
      assert.ok(base.ok);
      const seenByB = await b.read(key);
      assert.deepEqual(seenByB, { value: { n: 0 }, revision: base.revision });

      const [wa, wb] = await Promise.all([
        a.compareAndSwap(key, base.revision, { n: 1, by: 'a' }, meta('a: 0 -> 1')),
        b.compareAndSwap(key, base.revision, { n: 1, by: 'b' }, meta('b: 0 -> 1')),
      ]);
      assert.equal([wa, wb].filter(w => w.ok).length, 1, JSON.stringify([wa, wb]));
      const winner = wa.ok ? wa : wb;
      assert.ok(winner.ok);
      const [loser, loserName] = wa.ok ? [b, 'b'] : [a, 'a'];
      const fresh = await loser.read(key);
      assert.deepEqual(fresh, { value: { n: 1, by: wa.ok ? 'a' : 'b' }, revision: winner.revision });
      assert.ok((await loser.compareAndSwap(key, fresh.revision, { n: 2, by: loserName }, meta(`${loserName}: 1 -> 2`))).ok);
      // One commit per successful write, each child of the revision it was computed from.
      const log = remoteLog(world.remote, lockRef(PREFIX, 'records', key));
      assert.deepEqual(
        log.map(c => c.subject),
        [`${loserName}: 1 -> 2`, wa.ok ? 'a: 0 -> 1' : 'b: 0 -> 1', 'create'],
      );
      assert.equal(git(world.remote, 'rev-parse', `${log[0].sha}^`).trim(), winner.revision);
    });

    it('refuses a create over an existing record from another clone', async () => {
      const key = randomKey();
      assert.ok((await driverIn(0).compareAndSwap(key, null, { by: 'a' }, meta('create a'))).ok);
      assert.deepEqual(await driverIn(1).compareAndSwap(key, null, { by: 'b' }, meta('create b')), { ok: false });
    });

    it('refuses an expected revision this clone never fetched when the ref is elsewhere', async () => {
      const [a, b] = [driverIn(0), driverIn(1)];
      const key = randomKey();
      const first = await a.compareAndSwap(key, null, { n: 0 }, meta('create'));
      assert.ok(first.ok);
      const second = await a.compareAndSwap(key, first.revision, { n: 1 }, meta('one'));
      assert.ok(second.ok);
      // b never read: it must fetch to build on `second`, and must refuse the stale `first`.
      assert.deepEqual(await b.compareAndSwap(key, first.revision, { n: 9 }, meta('stale')), { ok: false });
      assert.ok((await b.compareAndSwap(key, second.revision, { n: 2 }, meta('two'))).ok);
      assert.deepEqual((await a.read(key))?.value, { n: 2 });
    });
  });

  describe('audit history and compaction', () => {
    it('reads the ref history as the audit trail, newest first, with authors and a limit', async () => {
      const [a, b] = [driverIn(0), driverIn(1)];
      const key = randomKey();
      const revisions: string[] = [];
      let expected: string | null = null;
      for (const [i, driver] of [a, b, a, b].entries()) {
        if (expected !== null) expected = (await driver.read(key))!.revision;
        const written = await driver.compareAndSwap(key, expected, { step: i }, meta(`step ${i}`));
        assert.ok(written.ok);
        revisions.push(written.revision);
        expected = written.revision;
      }
      const history = await a.readHistory(key);
      assert.deepEqual(
        history.map(e => e.summary),
        ['step 3', 'step 2', 'step 1', 'step 0'],
      );
      assert.deepEqual(
        history.map(e => e.revision),
        revisions.slice().reverse(),
      );
      assert.deepEqual(
        history.map(e => e.author),
        ['clone-1', 'clone-0', 'clone-1', 'clone-0'],
      );
      assert.ok(history.every(e => Math.abs(e.time - Date.now()) < 600_000));
      assert.deepEqual(
        (await b.readHistory(key, 2)).map(e => e.summary),
        ['step 3', 'step 2'],
      );
      assert.deepEqual(await a.readHistory(randomKey()), []);
    });

    it('reads the history from a revision read before: a step pushed since is not listed (the proven page of audit --history and verify)', async () => {
      const [a, b] = [driverIn(0), driverIn(1)];
      const key = randomKey();
      const first = await a.compareAndSwap(key, null, { step: 0 }, meta('step 0'));
      assert.ok(first.ok);
      const second = await a.compareAndSwap(key, first.revision, { step: 1 }, meta('step 1'));
      assert.ok(second.ok);
      const read = (await a.read(key))!;
      assert.equal(read.revision, second.revision);
      // Between the read (which a signed page proves) and the listing, another clone pushes a step.
      assert.ok((await b.compareAndSwap(key, (await b.read(key))!.revision, { step: 2 }, meta('step 2'))).ok);
      assert.deepEqual(
        (await a.readHistory(key, Infinity, read.revision)).map(e => e.summary),
        ['step 1', 'step 0'],
      );
      assert.deepEqual(
        (await a.readHistory(key, Infinity)).map(e => e.summary),
        ['step 2', 'step 1', 'step 0'],
        'without a revision: the current one',
      );
    });

    it('keeps audit lines on one line: a summary with newlines cannot forge history entries', async () => {
      const a = driverIn(0);
      const key = randomKey();
      assert.ok((await a.compareAndSwap(key, null, { n: 0 }, meta('first\n\nLockstep-Snapshot: 1\nsecond'))).ok);
      const history = await a.readHistory(key);
      assert.equal(history.length, 1);
      assert.equal(history[0].summary, 'first Lockstep-Snapshot: 1 second');
    });

    it("takes a record's entries from its own audit line, never from what its commit says", async () => {
      const a = driverIn(0);
      const key = randomKey();
      const line = { at: Date.UTC(2026, 0, 1, 9), who: 'bob@example.com', action: 'petition', grant: 1, outcome: 'done' };
      // A caller (or a forger) whose commit message claims another story: the entry is the record's line.
      assert.ok((await a.compareAndSwap(key, null, { audit: [line] }, meta('clear by ops@example.com (grant #1): gone'))).ok);
      const [entry] = await a.readHistory(key);
      assert.deepEqual(
        { time: entry.time, author: entry.author, summary: entry.summary, line: entry.line },
        { time: line.at, author: 'bob@example.com', summary: 'petition by bob@example.com (grant #1)', line },
      );
      // The commit itself is stamped from the line too: subject, author and date.
      const ref = lockRef(PREFIX, 'records', key);
      assert.equal(
        git(world.remote, 'log', '-1', '--format=%s|%an|%ae|%at|%ct', ref).trim(),
        `petition by bob@example.com (grant #1)|bob@example.com|bob@example.com|${line.at / 1000}|${line.at / 1000}`,
      );
    });

    it('compact squashes the history into one snapshot commit, keeping the value and every audit line', async () => {
      const [a, b] = [driverIn(0), driverIn(1)];
      const key = randomKey();
      let expected: string | null = null;
      for (let i = 0; i < 5; i++) {
        const written = await a.compareAndSwap(key, expected, { grant: i }, meta(`grant ${i}`));
        assert.ok(written.ok);
        expected = written.revision;
      }
      const before = await a.readHistory(key);
      const ref = lockRef(PREFIX, 'records', key);
      assert.equal(remoteLog(world.remote, ref).length, 5);

      const compacted = await b.compact(key);
      assert.ok(compacted.ok && compacted.revision !== null);
      assert.equal(compacted.squashed, 5);
      assert.equal(remoteLog(world.remote, ref).length, 1, 'one commit left on the remote ref');
      const audit = git(world.remote, 'show', `${compacted.revision}:audit.log`);
      for (let i = 0; i < 5; i++) assert.match(audit, new RegExp(`"summary":"grant ${i}"`));
      // The value is unchanged, the revision is new, and history reads through the snapshot.
      assert.deepEqual(await a.read(key), { value: { grant: 4 }, revision: compacted.revision });
      assert.deepEqual(await a.readHistory(key), before);
      // Nothing new to squash: no write.
      assert.deepEqual(await a.compact(key), { ok: true, revision: compacted.revision, squashed: 0 });

      // The old revision is gone: a writer still holding it loses, then writes on the snapshot.
      assert.deepEqual(await a.compareAndSwap(key, expected, { grant: 99 }, meta('stale')), { ok: false });
      assert.ok((await a.compareAndSwap(key, compacted.revision, { grant: 5 }, meta('grant 5'))).ok);
      assert.deepEqual(
        (await b.readHistory(key)).map(e => e.summary),
        ['grant 5', ...before.map(e => e.summary)],
      );
      assert.deepEqual(
        (await b.readHistory(key, 3)).map(e => e.summary),
        ['grant 5', 'grant 4', 'grant 3'],
      );

      // A second compaction keeps the first one's entries too.
      const again = await b.compact(key);
      assert.ok(again.ok);
      assert.equal(remoteLog(world.remote, ref).length, 1);
      assert.deepEqual(
        (await a.readHistory(key)).map(e => e.summary),
        ['grant 5', ...before.map(e => e.summary)],
      );
    });

    it('reads a history again by parsing only what was written since, and lists exactly what a reader that remembers nothing lists', async () => {
      const spawned: string[] = [];
      const a = driverIn(0, { onGitSpawn: s => spawned.push(s) });
      const b = driverIn(1);
      const key = randomKey();
      let expected: string | null = null;
      const write = async (i: number) => {
        const written = await b.compareAndSwap(key, expected, { grant: i }, meta(`grant ${i}`));
        assert.ok(written.ok);
        expected = written.revision;
      };
      // More records than one cat-file reads (BATCH, 128): the walk reads them in two.
      const n = 130;
      for (let i = 0; i < n; i++) await write(i);
      const readAll = () => readCounted(a, key, spawned);
      // A reader in a clone that never read this history: nothing in memory, nothing kept on disk.
      const remembersNothing = async () => {
        forgetKept(0);
        return (await readCounted(driverIn(0), key, [])).entries;
      };

      const first = await readAll();
      assert.deepEqual(
        first.entries.map(e => e.summary),
        Array.from({ length: n }, (_, i) => `grant ${n - 1 - i}`),
      );
      assert.equal(first.catFiles, 2, '130 records, read 128 at a time');
      assert.deepEqual(await readAll(), { entries: first.entries, catFiles: 0 }, 'nothing written since: nothing read');

      await write(n);
      const second = await readAll();
      assert.equal(second.catFiles, 1, 'one new record');
      assert.deepEqual(second.entries, [second.entries[0], ...first.entries]);
      assert.equal(second.entries[0].summary, `grant ${n}`);
      assert.deepEqual(second.entries, await remembersNothing());

      // Another clone compacts: the snapshot is a new commit; its audit.log is read once, then remembered.
      const snapshot = await b.compact(key);
      assert.ok(snapshot.ok && snapshot.revision !== null);
      expected = snapshot.revision;
      const compacted = await readAll();
      assert.equal(compacted.catFiles, 1, "the snapshot's audit.log");
      assert.deepEqual(compacted.entries, second.entries);
      await write(n + 1);
      const after = await readAll();
      assert.equal(after.catFiles, 1, 'the one record written since, not the audit.log again');
      assert.deepEqual(after.entries, [after.entries[0], ...second.entries]);
      assert.deepEqual(after.entries, await remembersNothing());
    });

    it('a new process in the clone starts from the entries the last one kept on disk; a damaged or foreign file there is ignored and replaced', async () => {
      const b = driverIn(1);
      const key = randomKey();
      let expected: string | null = null;
      for (let i = 0; i < 70; i++) {
        const written = await b.compareAndSwap(key, expected, { grant: i }, meta(`grant ${i}`));
        assert.ok(written.ok);
        expected = written.revision;
      }
      // Each driver stands for a new process: its own memory, the clone's .git/lockstep shared.
      const process = async () => {
        const spawned: string[] = [];
        return readCounted(driverIn(0, { onGitSpawn: s => spawned.push(s) }), key, spawned);
      };
      forgetKept(0);
      const first = await process();
      assert.equal(first.catFiles, 1, 'nothing kept yet: every record is read, by one process');
      const [file] = keptFiles(0);
      assert.ok(file !== undefined, 'the parsed entries are kept in .git/lockstep');
      assert.equal(fs.statSync(file).mode & 0o077, 0, "readable by the clone's owner only");
      assert.equal(git(world.clones[0], 'status', '--porcelain', '--untracked-files=all'), '', 'nothing in the working tree');
      assert.deepEqual(await process(), { entries: first.entries, catFiles: 0 }, 'the next process reads no record');

      const damages: [string, string][] = [
        ['not JSON', '{"v":1,"entries":[{"rev'],
        ['another format', JSON.stringify({ v: 2, entries: first.entries })],
        ['an entry of the wrong shape', JSON.stringify({ v: 1, entries: [{ revision: first.entries[0].revision, time: 'noon' }] })],
        ['an entry that names no commit', JSON.stringify({ v: 1, entries: [{ ...first.entries[0], revision: '../../HEAD' }] })],
      ];
      for (const [label, text] of damages) {
        fs.writeFileSync(file, text);
        assert.deepEqual(await process(), { entries: first.entries, catFiles: 1 }, `${label}: read again from the commits`);
        assert.deepEqual(await process(), { entries: first.entries, catFiles: 0 }, `${label}: replaced by a sound file`);
      }
    });

    it('a temporary file a killed reader left beside the kept entries is removed at the next save, one of a live process is not', async () => {
      const b = driverIn(1);
      const key = randomKey();
      assert.ok((await b.compareAndSwap(key, null, { grant: 0 }, meta('grant 0'))).ok);
      forgetKept(0);
      await driverIn(0).readHistory(key);
      const dir = path.join(world.clones[0], '.git', 'lockstep');
      // A process that has exited: its pid names no process now (a reader killed between its write and its rename).
      const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
      const orphan = path.join(dir, `.tmp-${gone}-0a1b2c3d-history-${'0'.repeat(32)}.json`);
      const live = path.join(dir, `.tmp-${process.pid}-0a1b2c3d-history-${'1'.repeat(32)}.json`);
      for (const file of [orphan, live]) fs.writeFileSync(file, '{"v":1,"entries":[');
      assert.ok((await b.compareAndSwap(key, (await b.read(key))!.revision, { grant: 1 }, meta('grant 1'))).ok);
      await driverIn(0).readHistory(key);
      assert.equal(fs.existsSync(orphan), false, "the dead process's file is gone");
      assert.equal(fs.existsSync(live), true, "a live process's file is left to it");
      assert.equal(keptFiles(0).length, 1, 'the entries themselves are kept');
      fs.rmSync(live);
    });

    it('refuses a damaged record in the history at every read: what failed to parse is never remembered', async () => {
      const a = driverIn(0);
      const clone = world.clones[1];
      const key = randomKey();
      const ref = lockRef(PREFIX, 'records', key);
      assert.ok((await a.compareAndSwap(key, null, { grant: 0 }, meta('grant 0'))).ok);
      // A teammate with push access appends a commit whose record.json is not JSON, and a sound one on top.
      git(clone, 'fetch', '--quiet', 'origin', `+${ref}:refs/planted`);
      const commitOf = (record: string, parent: string) => {
        const blob = gitInput(clone, record, 'hash-object', '-w', '--stdin').trim();
        const tree = gitInput(clone, `100644 blob ${blob}\trecord.json\n`, 'mktree').trim();
        return gitInput(clone, 'planted', 'commit-tree', tree, '-p', parent).trim();
      };
      const tip = commitOf('{"grant": 2}', commitOf('{"holder": "ann", grant', 'refs/planted'));
      git(clone, 'push', '--quiet', '--force', 'origin', `${tip}:${ref}`);
      assert.deepEqual((await a.read(key))?.value, { grant: 2 }, 'the tip itself reads');
      for (let i = 0; i < 2; i++) await assert.rejects(a.readHistory(key), LockStorageError, `read ${i + 1}`);
    });
  });

  describe('plain leases', () => {
    it('keeps one commit per lease ref (no history to compact) while the fencing counter grows', async () => {
      const [a, b] = [driverIn(0), driverIn(1)];
      const key = randomKey();
      const tokens: number[] = [];
      for (const driver of [a, b, a]) {
        const owner = randomOwner();
        const claim = await driver.claim(key, owner, 60_000, Date.now());
        assert.ok(claim.claimed);
        tokens.push(claim.fencingToken);
        assert.equal(await driver.extend(key, owner, 60_000, Date.now()), true);
        assert.equal(await driver.release(key, owner, Date.now()), 'released');
      }
      assert.deepEqual(tokens, [1, 2, 3]);
      assert.equal(remoteLog(world.remote, lockRef(PREFIX, 'leases', key)).length, 1);
    });

    it('serves createLockManager through openDriver (driver: git)', async () => {
      const manager = createLockManager({ driver: 'git', gitDir: world.clones[0], prefix: PREFIX, env: {} });
      const other = createLockManager({ driver: 'git', gitDir: world.clones[1], prefix: PREFIX, env: {} });
      try {
        const first = await manager.acquire('deploy', { ttl: 60 });
        assert.ok(first.acquired);
        assert.equal((await other.acquire('deploy', { ttl: 60 })).acquired, false);
        assert.equal(await first.release(), true);
        const second = await other.acquire('deploy', { ttl: 60 });
        assert.ok(second.acquired);
        assert.ok(second.fencingToken! > first.fencingToken!);
        await second.release();
        assert.equal(await manager.driverName(), 'git');
      } finally {
        await manager.close();
        await other.close();
      }
    });
  });

  describe('watch', () => {
    it('calls the watcher when another clone moves the ref (ls-remote polling)', async () => {
      const [a, b] = [driverIn(0, { pollIntervalMs: 50 }), driverIn(1)];
      const key = randomKey();
      const created = await b.compareAndSwap(key, null, { n: 0 }, meta('create'));
      assert.ok(created.ok);
      await a.read(key);
      let calls = 0;
      const watcher = a.watch(key, () => {
        calls++;
      });
      try {
        assert.ok((await b.compareAndSwap(key, created.revision, { n: 1 }, meta('move'))).ok);
        await waitFor(() => calls > 0, { timeoutMs: 10_000, description: 'watcher called after a remote write' });
      } finally {
        watcher.dispose();
      }
    });

    it('an idle window costs at most 30 ls-remote in a simulated quarter hour (120 an hour) and still sees a change by another clone within 36 s', async () => {
      const clock = new ManualClock();
      const spawned: string[] = [];
      const [a, b] = [driverIn(0, { pollClock: clock, pollRandom: seededRandom(3), onGitSpawn: s => spawned.push(s) }), driverIn(1)];
      const key = randomKey();
      const created = await b.compareAndSwap(key, null, { n: 0 }, meta('create'));
      assert.ok(created.ok);
      const heard: number[] = [];
      const watcher = a.watch(key, () => heard.push(clock.monotonic()), { interest: () => IDLE_INTEREST });
      try {
        assert.deepEqual(watcher.freshness, { idleMs: GIT_POLL_PACE.slow.maxMs, activeMs: GIT_POLL_PACE.fast.maxMs });
        // A quarter of an hour on the real remote (the whole hour is counted in remotePoller.idleHour.test.ts): every
        // poll is a real git process.
        const changedAt = 5 * MINUTE;
        await runUntil(clock, changedAt);
        assert.ok((await b.compareAndSwap(key, created.revision, { n: 1 }, meta('move'))).ok);
        await runUntil(clock, changedAt + GIT_POLL_PACE.slow.maxMs);
        assert.equal(heard.length, 1, 'the change is heard once');
        assert.ok(heard[0]! - changedAt <= GIT_POLL_PACE.slow.maxMs, `heard ${heard[0]! - changedAt} ms after the change`);
        await runUntil(clock, HOUR / 4 - 1);
        const polls = spawned.filter(s => s === 'ls-remote').length;
        assert.ok(polls <= 30 && polls >= 25, `${polls} ls-remote in the idle quarter hour`);
        assert.deepEqual([...new Set(spawned)], ['ls-remote'], 'an idle watch runs nothing but ls-remote');
      } finally {
        watcher.dispose();
      }
    });

    it('the slow pace on a real remote sees a change (short slow interval; waits for the condition)', async () => {
      const pace = { ...GIT_POLL_PACE, fast: { minMs: 40, maxMs: 50 }, slow: { minMs: 150, maxMs: 200 } };
      const spawned: string[] = [];
      const [a, b] = [driverIn(0, { pollPace: pace, onGitSpawn: s => spawned.push(s) }), driverIn(1)];
      const key = randomKey();
      const created = await b.compareAndSwap(key, null, { n: 0 }, meta('create'));
      assert.ok(created.ok);
      let calls = 0;
      const watcher = a.watch(key, () => calls++, { interest: () => IDLE_INTEREST });
      try {
        await waitFor(() => spawned.includes('ls-remote'), { timeoutMs: 10_000, description: 'the first poll' });
        assert.ok((await b.compareAndSwap(key, created.revision, { n: 1 }, meta('move'))).ok);
        await waitFor(() => calls > 0, { timeoutMs: 10_000, description: 'watcher called after a remote write, at the slow pace' });
      } finally {
        watcher.dispose();
      }
    });

    it('polls with one ls-remote per interval for all watched refs, and stops when disposed', async () => {
      const spawned: string[] = [];
      const a = driverIn(0, { pollIntervalMs: 30, onGitSpawn: s => spawned.push(s) });
      const watchers = [randomKey(), randomKey(), randomKey()].map(key => a.watch(key, () => undefined));
      await waitFor(() => spawned.filter(s => s === 'ls-remote').length >= 3, { description: 'three polls' });
      assert.ok(
        spawned.every(s => s === 'ls-remote'),
        spawned.join(','),
      );
      for (const w of watchers) w.dispose();
      // No poll starts after dispose (one in flight was counted when it started). Several reads let
      // many poll intervals pass without a fixed sleep.
      const polls = spawned.filter(s => s === 'ls-remote').length;
      for (let i = 0; i < 8; i++) await a.read(randomKey());
      assert.equal(spawned.filter(s => s === 'ls-remote').length, polls);
    });
  });

  describe('errors', () => {
    it('reports an unreachable remote as LockBackendError (exit 4) with no credentials, fast, for every operation', async () => {
      const unreachable = [
        path.join(tmp.path, 'no-such-remote.git'),
        'http://alice:s3cret-token@127.0.0.1:9/team/repo.git',
        'no-such-remote-name',
      ];
      for (const remote of unreachable) {
        const driver = driverIn(0, { remote, timeoutMs: 20_000 });
        const key = randomKey();
        for (const attempt of [
          () => driver.read(key),
          () => driver.compareAndSwap(key, null, { n: 1 }, meta('create')),
          () => driver.claim(key, randomOwner(), 60_000, Date.now()),
        ]) {
          const started = performance.now();
          const error = await attempt().then(
            () => undefined,
            (e: unknown) => e,
          );
          const tookMs = performance.now() - started;
          assert.ok(error instanceof LockBackendError, `${remote}: ${String(error)}`);
          // Fast: git's own refusal, not the 20 s timeout running out.
          assert.ok(tookMs < 10_000, `${remote}: took ${Math.round(tookMs)} ms, not well under the 20 s timeout`);
          assert.equal(exitCodeFor(error), 4);
          const text = `${error.message} ${String((error.cause as Error | undefined)?.message)}`;
          assert.doesNotMatch(text, /s3cret|alice/);
          assert.ok(!text.includes(key), 'no raw backend key');
          assert.match(error.message, /remote/);
        }
      }
    });

    it('reports a damaged ref as LockStorageError (exit 5) and never reads it as free', async () => {
      const a = driverIn(0);
      const clone = world.clones[1];
      const plant = (ref: string, files: Record<string, string>) => {
        const entries = Object.entries(files)
          .map(([name, content]) => `100644 blob ${gitInput(clone, content, 'hash-object', '-w', '--stdin').trim()}\t${name}\n`)
          .join('');
        const tree = gitInput(clone, entries, 'mktree').trim();
        const commit = gitInput(clone, 'planted', 'commit-tree', tree).trim();
        git(clone, 'push', '--quiet', 'origin', `${commit}:${ref}`);
      };
      const cases: [string, Record<string, string>][] = [
        ['no record.json', { 'other.txt': 'hello' }],
        ['not JSON', { 'record.json': '{"holder": "ann", grant' }],
      ];
      for (const [label, files] of cases) {
        const key = randomKey();
        plant(lockRef(PREFIX, 'records', key), files);
        plant(lockRef(PREFIX, 'leases', key), files);
        const error = await a.read(key).then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(error instanceof LockStorageError, `${label}: ${String(error)}`);
        assert.equal(exitCodeFor(error), 5);
        assert.ok(!error.message.includes(key));
        assert.deepEqual(await a.compareAndSwap(key, null, { free: true }, meta('create over damage')), { ok: false }, label);
        await assert.rejects(a.claim(key, randomOwner(), 60_000, Date.now()), LockStorageError, label);
      }

      // A ref at a blob, and a lease ref holding JSON that is not a lease.
      const key = randomKey();
      const blob = gitInput(clone, '{}', 'hash-object', '-w', '--stdin').trim();
      git(clone, 'push', '--quiet', 'origin', `${blob}:${lockRef(PREFIX, 'records', key)}`);
      await assert.rejects(a.read(key), LockStorageError);
      plant(lockRef(PREFIX, 'leases', key), { 'record.json': '{"v":1,"counter":"x"}' });
      await assert.rejects(a.claim(key, randomOwner(), 60_000, Date.now()), LockStorageError);
    });

    it('reports a write the remote refuses (a hook, a permission) as LockBackendError, not as a lost race', async () => {
      const a = driverIn(0);
      const key = randomKey();
      fs.writeFileSync(path.join(world.remote, 'hooks', 'pre-receive'), '#!/bin/sh\necho "no lock refs here" >&2\nexit 1\n', {
        mode: 0o755,
      });
      const error = await a.compareAndSwap(key, null, { n: 1 }, meta('create')).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof LockBackendError, String(error));
      assert.match(error.message, /refused/);
      await assert.rejects(a.claim(key, randomOwner(), 60_000, Date.now()), LockBackendError);
    });

    it('rejects configuration errors with the setting named (exit 2)', async () => {
      assert.throws(
        () => createGitDriver({ gitDir: undefined, gitRemote: 'origin', prefix: PREFIX, gitTimeoutMs: 5000 }),
        (e: unknown) => e instanceof LockConfigurationError && e.setting === 'gitDir',
      );
      assert.throws(
        () => createGitDriver({ gitDir: 'relative/clone', gitRemote: 'origin', prefix: PREFIX, gitTimeoutMs: 5000 }),
        (e: unknown) => e instanceof LockConfigurationError && e.setting === 'gitDir',
      );
      await assert.rejects(openDriver(resolveConfig({ driver: 'git' }, {})), LockConfigurationError);
      const notAClone = createGitDriver({
        gitDir: path.join(tmp.path, 'missing'),
        gitRemote: 'origin',
        prefix: PREFIX,
        gitTimeoutMs: 5000,
      });
      open.push(notAClone);
      const error = await notAClone.read(randomKey()).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof LockConfigurationError && error.setting === 'gitDir', String(error));
      assert.equal(exitCodeFor(error), 2);
    });
  });

  describe('repository set-ups', () => {
    it('writes with a neutral identity when the clone has none', async () => {
      const clone = world.clones[0];
      git(clone, 'config', '--unset', 'user.name');
      git(clone, 'config', '--unset', 'user.email');
      // Refuse git's guessed identity (user@hostname) too, whatever this machine's global config says.
      git(clone, 'config', 'user.useConfigOnly', 'true');
      const saved = { global: process.env.GIT_CONFIG_GLOBAL, system: process.env.GIT_CONFIG_NOSYSTEM };
      process.env.GIT_CONFIG_GLOBAL = '/dev/null';
      process.env.GIT_CONFIG_NOSYSTEM = '1';
      let a: GitDriver;
      try {
        a = driverIn(0); // the runner copies the environment when it is created
      } finally {
        restore('GIT_CONFIG_GLOBAL', saved.global);
        restore('GIT_CONFIG_NOSYSTEM', saved.system);
      }
      const key = randomKey();
      assert.ok((await a.compareAndSwap(key, null, { n: 1 }, meta('create'))).ok);
      assert.deepEqual(
        (await a.readHistory(key)).map(e => e.author),
        ['Lockstep'],
      );
    });

    it('reads from the bare remote itself with gitRemote "." (as a server-side guard would)', async () => {
      const key = randomKey();
      const written = await driverIn(0).compareAndSwap(key, null, { grant: 3 }, meta('grant 3'));
      assert.ok(written.ok);
      const onServer = openGitDriver(world.remote, { remote: '.' });
      open.push(onServer);
      assert.deepEqual(await onServer.read(key), { value: { grant: 3 }, revision: written.revision });
      assert.deepEqual(
        (await onServer.readHistory(key)).map(e => e.summary),
        ['grant 3'],
      );
      assert.equal(await onServer.read(randomKey()), null);
      // Read in place: nothing fetched, no tracking refs added to the server's repository.
      assert.equal(git(world.remote, 'for-each-ref', 'refs/lockstep-remotes/').trim(), '');
    });

    it("skips the clone's pre-push hook for lock refs", async () => {
      const clone = world.clones[0];
      const hook = path.join(clone, '.git', 'hooks', 'pre-push');
      fs.writeFileSync(hook, '#!/bin/sh\necho refused >&2\nexit 1\n', { mode: 0o755 });
      assert.ok((await driverIn(0).compareAndSwap(randomKey(), null, { n: 1 }, meta('create'))).ok);
    });
  });
});

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
