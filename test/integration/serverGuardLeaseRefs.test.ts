import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SECOND, systemClock } from '../../src/core/clock';
import { DEFAULT_PREFIX } from '../../src/core/config';
import { exitCodeFor, LockBackendError, LockStorageError } from '../../src/core/errors';
import { createLockManager, type LockManager } from '../../src/core/leases';
import { keyDigest } from '../../src/core/names';
import { lockRef } from '../../src/core/stores/git/gitRefs';
import { scaledSeconds } from '../helpers/calibration';
import { createFencingTeam, type FencingTeam, type TeamMember } from '../helpers/fencingFixture';
import { waitFor } from '../helpers/waitFor';

/**
 * The server guard's rules for plain lease refs (git driver: `lockstep run` and the library's LockManager), end
 * to end: a real bare remote with `lockstep hooks install --server --skew 90`, LockManagers over the git driver in
 * two clones, and pushes made by hand where a client would never make them.
 *
 * - Liveness is the server's clock's, and the skew never helps a claim: a claim from a clock 60 s ahead (within
 *   the 90 s skew), of a lease that has not ended by the server's clock, is refused; once it has ended, the same
 *   claim is accepted with the next fencing token. (A `now + skew` in the rule would accept the first; a
 *   `now - skew` would refuse the second.)
 * - A lease ref whose current record is damaged fails closed: every update is refused, so no claim can restart
 *   its fencing counter at 1; clients read it as damaged (exit 5), never as free.
 */

const SKEW_SECONDS = 90;
/** The claimant's clock runs this far ahead of the server's: within the skew. */
const AHEAD_MS = 60 * SECOND;

describe('server guard: plain lease refs through a guarded remote (git driver, skew 90 s)', function () {
  this.timeout(120_000);
  let team: FencingTeam;
  let alice: TeamMember, bob: TeamMember;
  const managers: LockManager[] = [];
  const manager = (who: TeamMember, aheadMs = 0) => {
    const m = createLockManager({
      driver: 'git',
      gitDir: who.dir,
      prefix: DEFAULT_PREFIX,
      env: {},
      clock: aheadMs === 0 ? systemClock : { ...systemClock, now: () => Date.now() + aheadMs },
    });
    managers.push(m);
    return m;
  };
  const refOf = (name: string) => lockRef(DEFAULT_PREFIX, 'leases', keyDigest(DEFAULT_PREFIX, name));
  const remoteRef = (ref: string) => team.gitOk(team.remote, 'rev-parse', '--verify', '--quiet', ref);
  const remoteLease = async (ref: string) =>
    JSON.parse(await team.gitOk(team.remote, 'cat-file', 'blob', `${ref}:record.json`)) as { counter: number; expiresAt: number };

  /** A claim made by hand in bob's clone and pushed over REF (force, no client hook): only the server decides. */
  const pushClaim = async (ref: string, counter: number) => {
    const record = JSON.stringify({ v: 1, counter, owner: randomBytes(32).toString('hex'), expiresAt: Date.now() + 60 * SECOND });
    const blob = (await team.git(bob.dir, ['hash-object', '-w', '--stdin'], { input: record })).stdout.trim();
    const tree = (await team.git(bob.dir, ['mktree'], { input: `100644 blob ${blob}\trecord.json\n` })).stdout.trim();
    const commit = await team.gitOk(bob.dir, 'commit-tree', tree, '-m', 'lockstep: lease update');
    return team.git(bob.dir, ['push', '--no-verify', 'origin', `+${commit}:${ref}`]);
  };

  before(async () => {
    team = await createFencingTeam({ members: ['alice', 'bob'], driver: 'git', serverInstallArgs: ['--skew', String(SKEW_SECONDS)] });
    [alice, bob] = team.members;
    const pinned = JSON.parse(fs.readFileSync(path.join(team.remote, 'hooks', 'lockstep-server.json'), 'utf8')) as { skewSeconds: number };
    assert.equal(pinned.skewSeconds, SKEW_SECONDS, 'the guard decides with a non-zero skew');
  });
  after(async () => {
    await Promise.all(managers.map(m => m.close()));
    team?.dispose();
  });

  it("a claim of a lease still live by the server's clock is refused, from a clock ahead within the skew; once it has ended, the claim takes the next token", async () => {
    const name = `deploy-${randomBytes(4).toString('hex')}`;
    const held = await manager(alice).acquire(name, { ttl: scaledSeconds(5) });
    assert.ok(held.acquired);
    assert.equal(held.fencingToken, 1);
    const endsAt = (await remoteLease(refOf(name))).expiresAt;

    // By bob's clock (60 s ahead) alice's lease has ended, so his manager claims it; the server's clock says live.
    const ahead = manager(bob, AHEAD_MS);
    const refused = await ahead.acquire(name, { ttl: 30 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(refused instanceof LockBackendError, `a refused claim is a backend refusal: ${String(refused)}`);
    assert.match(refused.message, /The git remote refused to update a lock ref/);
    assert.match(String((refused.cause as Error).message), /pre-receive hook declined/);
    // The error passes on the guard's own reason (before, only "pre-receive hook declined").
    assert.match(
      refused.message,
      /the server guard said: lockstep: refused a lease ref's update: the lease is still live by the server's clock.*Running it again gets the same answer/,
    );
    assert.doesNotMatch(refused.message, new RegExp(name), 'the lease name is not in the message');
    // Why, in the guard's words (a claim made by hand, as a client 60 s ahead would make it).
    const byHand = await pushClaim(refOf(name), 2);
    assert.notEqual(byHand.code, 0);
    assert.match(
      byHand.stderr,
      /^remote: lockstep: refused a lease ref's update: the lease is still live by the server's clock, so it cannot be claimed again\./m,
    );
    assert.ok(Date.now() < endsAt, "the claim was refused while the lease was live by the server's clock (machine too slow otherwise)");
    assert.equal((await remoteLease(refOf(name))).counter, 1, 'the counter did not move');

    // Past the lease's end by the server's clock (and well within the skew of it), the same claim is accepted.
    await waitFor(() => Date.now() > endsAt, { timeoutMs: 30_000, intervalMs: 100, description: "alice's lease ended by the real clock" });
    const taken = await ahead.acquire(name, { ttl: 30 });
    assert.ok(taken.acquired);
    assert.equal(taken.fencingToken, 2);
    assert.equal((await remoteLease(refOf(name))).counter, 2);
    await taken.release();
  });

  describe('a lease ref whose current record is damaged', () => {
    /** Writes an object into the bare remote (as damage or an administrator's slip would: no hook runs) and points REF at it. */
    const damage = async (ref: string, kind: string): Promise<string> => {
      const write = async (text: string) => (await team.git(team.remote, ['hash-object', '-w', '--stdin'], { input: text })).stdout.trim();
      const tree = async (entries: string) => (await team.git(team.remote, ['mktree'], { input: entries })).stdout.trim();
      const commit = async (treeSha: string) =>
        (
          await team.git(team.remote, ['commit-tree', treeSha, '-m', 'damaged'], {
            env: { GIT_AUTHOR_NAME: 'x', GIT_AUTHOR_EMAIL: 'x@example.com', GIT_COMMITTER_NAME: 'x', GIT_COMMITTER_EMAIL: 'x@example.com' },
          })
        ).stdout.trim();
      const withRecord = async (text: string) => commit(await tree(`100644 blob ${await write(text)}\trecord.json\n`));
      let sha: string;
      switch (kind) {
        case 'not JSON':
          sha = await withRecord('{"v":1,"counter":7,');
          break;
        case 'not a lease record':
          sha = await withRecord(JSON.stringify({ v: 1, counter: '7', owner: null, expiresAt: 0 }));
          break;
        case 'no record.json':
          sha = await commit(await tree(`100644 blob ${await write('x')}\tother.txt\n`));
          break;
        case 'not a commit':
          sha = await write(JSON.stringify({ v: 1, counter: 7, owner: null, expiresAt: 0 }));
          break;
        default:
          throw new Error(kind);
      }
      assert.match(sha, /^[0-9a-f]{40}$/, `${kind}: ${sha}`);
      await team.gitOk(team.remote, 'update-ref', ref, sha);
      return sha;
    };
    it('control: a claim made by hand creates a lease ref that does not exist yet (counter 1)', async () => {
      const ref = refOf(`fresh-${randomBytes(4).toString('hex')}`);
      const pushed = await pushClaim(ref, 1);
      assert.equal(pushed.code, 0, pushed.stderr);
      assert.equal((await remoteLease(ref)).counter, 1);
    });

    for (const kind of ['not JSON', 'not a lease record', 'no record.json', 'not a commit']) {
      it(`${kind}: the guard refuses a claim that would restart the counter at 1 (fail closed), and clients read it as damaged (exit 5)`, async () => {
        const name = `build-${randomBytes(4).toString('hex')}`;
        const ref = refOf(name);
        const damaged = await damage(ref, kind);

        const pushed = await pushClaim(ref, 1);
        assert.notEqual(pushed.code, 0, `the restart was accepted:\n${pushed.stderr}`);
        assert.match(
          pushed.stderr,
          /^remote: lockstep: refused a lease ref's update: the lease ref's current record is damaged \(not a lease record as Lockstep writes it\); a damaged lease is never treated as absent, which would restart its fencing counter\./m,
        );
        assert.match(pushed.stderr, /\[remote rejected\] .*\(pre-receive hook declined\)/);
        const refusal = pushed.stderr
          .split('\n')
          .filter(line => line.startsWith('remote: lockstep:'))
          .join('\n');
        for (const secret of [name, keyDigest(DEFAULT_PREFIX, name)]) assert.ok(!refusal.includes(secret), 'the refusal names no lease');
        assert.equal(await remoteRef(ref), damaged, 'the damaged ref is as it was');

        const read = await manager(bob)
          .acquire(name, { ttl: 30 })
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        assert.ok(read instanceof LockStorageError, `a damaged lease is a storage error, never free: ${String(read)}`);
        assert.equal(exitCodeFor(read), 5);
        assert.equal(await remoteRef(ref), damaged);
      });
    }
  });
});
