import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { lockRef } from '../../src/core/stores/git/gitRefs';
import { randomKey } from '../contract/driverContract';
import { childEnv, finished, firstJsonLine, REPO_ROOT, TSX_NODE_ARGS } from '../helpers/children';
import type { CounterResult, LeaseResult } from '../helpers/gitDriverWorker';
import { git, makeGitWorld, openGitDriver, remoteLog } from '../helpers/gitRemote';
import { useTempDir } from '../helpers/tempDir';

/**
 * Six real processes, each in its own clone of one bare remote, contending through the git driver:
 * git's atomic ref update with an expected old value is the only thing that orders them.
 */
const PROCESSES = 6;
const PREFIX = 'lockstep-test';
const WORKER = path.join(REPO_ROOT, 'test/helpers/gitDriverWorker.ts');

function startWorker(args: string[]) {
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, WORKER, ...args], {
    cwd: REPO_ROOT,
    env: childEnv({}),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return { child, done: finished(child, 110_000) };
}

function lastJson<T>(stdout: string): T {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as T;
}

describe('git driver under contention (6 processes, 6 clones)', function () {
  this.timeout(120_000);
  const tmp = useTempDir('lockstep-git-contention');

  it('compare-and-swap of a counter: exactly one wins per revision, one commit per successful write', async () => {
    const world = makeGitWorld(path.join(tmp.path), PROCESSES + 1);
    const key = randomKey();
    const setup = openGitDriver(world.clones[PROCESSES]);
    const base = await setup.compareAndSwap(key, null, { n: 0 }, { summary: 'create counter' });
    await setup.close();
    assert.ok(base.ok);

    const workers = world.clones
      .slice(0, PROCESSES)
      .map((clone, i) => startWorker(['--mode', 'counter', '--clone', clone, '--key', key, '--id', String(i)]));
    // Barrier: every worker has read the same base before any of them writes.
    const ready = await Promise.all(workers.map(w => firstJsonLine<{ ready: boolean; base: string }>(w.child)));
    assert.ok(
      ready.every(r => r.ready && r.base === base.revision),
      JSON.stringify(ready),
    );
    for (const w of workers) w.child.stdin.end('go\n');
    const outputs = await Promise.all(workers.map(w => w.done));
    for (const out of outputs) assert.equal(out.code, 0, out.stderr);
    const results = outputs.map(out => lastJson<CounterResult>(out.stdout));

    assert.equal(results.filter(r => r.firstOk).length, 1, `first writes from the common base: ${JSON.stringify(results)}`);
    // Every successful write moved n to n + 1 from a distinct revision: one winner per revision.
    const wins = results.map(r => r.win).sort((a, b) => a.n - b.n);
    assert.deepEqual(
      wins.map(w => w.n),
      [1, 2, 3, 4, 5, 6],
    );
    assert.equal(new Set(wins.map(w => w.from)).size, PROCESSES);
    assert.equal(wins[0].from, base.revision);
    for (let i = 1; i < wins.length; i++) assert.equal(wins[i].from, wins[i - 1].to, 'each write built on the previous one');

    // The ref's history on the remote: one commit per successful write (plus the creation), in order.
    const ref = lockRef(PREFIX, 'records', key);
    const log = remoteLog(world.remote, ref);
    assert.deepEqual(
      log.map(c => c.sha),
      [...wins.map(w => w.to).reverse(), base.revision],
    );
    assert.equal(log.length, PROCESSES + 1);
    const writer = new Map(results.map(r => [r.win.to, r]));
    for (const [i, commit] of log.slice(0, PROCESSES).entries()) {
      const by = writer.get(commit.sha)!;
      const n = PROCESSES - i;
      assert.equal(commit.subject, `worker ${by.id}: ${n - 1} -> ${n}`);
      assert.deepEqual(JSON.parse(git(world.remote, 'show', `${commit.sha}:record.json`)), { n, by: by.id });
    }
  });

  it('plain leases: no two holders at once, fencing tokens strictly increasing across processes', async () => {
    const world = makeGitWorld(path.join(tmp.path), PROCESSES);
    const key = randomKey();
    const shared = path.join(tmp.path, 'shared');
    fs.mkdirSync(shared);
    const rounds = 3;
    const workers = world.clones.map((clone, i) =>
      startWorker(['--mode', 'lease', '--clone', clone, '--key', key, '--id', String(i), '--rounds', String(rounds), '--shared', shared]),
    );
    for (const w of workers) w.child.stdin.end();
    const outputs = await Promise.all(workers.map(w => w.done));
    for (const out of outputs) assert.equal(out.code, 0, out.stderr);
    const results = outputs.map(out => lastJson<LeaseResult>(out.stdout));

    assert.deepEqual(
      results.map(r => r.violations),
      [0, 0, 0, 0, 0, 0],
      'nobody found another holder inside',
    );
    assert.ok(
      results.every(r => r.releases.every(x => x === 'released')),
      JSON.stringify(results.map(r => r.releases)),
    );
    // Tokens in the order the holders recorded them (serialised by the lease itself): 1, 2, 3, …
    const inOrder = fs.readFileSync(path.join(shared, 'tokens'), 'utf8').trim().split('\n').map(Number);
    assert.deepEqual(
      inOrder,
      Array.from({ length: PROCESSES * rounds }, (_, i) => i + 1),
    );
    for (const r of results) {
      for (let i = 1; i < r.tokens.length; i++) assert.ok(r.tokens[i] > r.tokens[i - 1]);
    }
    assert.ok(
      results.some(r => r.busy > 0),
      'the processes did contend',
    );
    assert.equal(remoteLog(world.remote, lockRef(PREFIX, 'leases', key)).length, 1, 'lease refs keep one commit');
  });
});
