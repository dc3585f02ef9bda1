/**
 * Writes whose outcome is unknown (docs/protocol.md#unknown-outcomes): a store that applied an acquire or a
 * release but whose answer never came back (a dropped connection, a killed push, a timeout) must leave
 * nothing that no clone can use. The next command in the same clone finds out from the page and finishes or
 * drops what the last one started. Real git clones, the real file store; the answer is lost by a wrapper
 * around the real driver (the write happens, then the call fails), and on the git driver by a real
 * pre-receive hook held longer than the clone's git timeout.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Container } from '../../src/core/container/container';
import { openDriver } from '../../src/core/drivers';
import { LockBackendError } from '../../src/core/errors';
import type { Driver } from '../../src/core/stores/store';
import { behaviourGroup } from '../helpers/behaviours';
import { createFencingTeam, type FencingTeam } from '../helpers/fencingFixture';
import { createGitFixture, expectError, expectOk, type GitFixture, type TeamMember } from '../helpers/gitFixture';
import { waitFor } from '../helpers/waitFor';

/**
 * after-write: the store applies the write, the answer is lost. before-write: nothing is written. late-write:
 * the answer is lost and the write arrives later — right after the store's next read (a push a slow server
 * hook still held, applied while the clone already tries again).
 */
type Loss = 'after-write' | 'before-write' | 'late-write' | undefined;

/** The real driver, except that the next compare-and-swap may lose its answer (after writing) or fail before writing. */
function losingAnswers(real: Driver): { driver: Driver; lose(next: Loss): void } {
  let pending: Loss;
  let late: Parameters<Driver['compareAndSwap']> | undefined;
  const read = async (...args: Parameters<Driver['read']>) => {
    const stored = await real.read(...args);
    const held = late;
    late = undefined;
    if (held) await real.compareAndSwap(...held);
    return stored;
  };
  const compareAndSwap = async (...args: Parameters<Driver['compareAndSwap']>) => {
    const loss = pending;
    pending = undefined;
    if (loss === 'before-write') throw new LockBackendError(real.name, 'The connection dropped before the write was sent.');
    if (loss === 'late-write') {
      late = args;
      throw new LockBackendError(real.name, 'The write is still on its way.');
    }
    const result = await real.compareAndSwap(...args);
    if (loss === 'after-write') throw new LockBackendError(real.name, 'The connection dropped before the answer came back.');
    return result;
  };
  const driver = new Proxy(real, {
    get(target, property) {
      if (property === 'compareAndSwap') return compareAndSwap;
      if (property === 'read') return read;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    driver,
    lose: next => {
      pending = next;
    },
  };
}

const lockstepDir = (who: TeamMember) => path.join(who.dir, '.git', 'lockstep');

describe('writes whose outcome is unknown: the next command finishes or drops them', function () {
  behaviourGroup(this, 'unknown outcomes');
  this.timeout(120_000);
  let team: GitFixture;
  let real: Driver;
  let alice: TeamMember, bob: TeamMember;
  const env = () => ({ ...process.env, LOCKSTEP_PATH: team.store });
  const open = (who: TeamMember, driver?: Driver) =>
    Container.open({ cwd: who.dir, env: env(), ...(driver ? { driverInstance: driver } : {}) });

  beforeEach(async () => {
    team = await createGitFixture({ members: ['alice', 'bob'], operators: [], settings: { serverGuard: true } });
    alice = team.member('alice');
    bob = team.member('bob');
    const probe = await open(alice);
    real = await openDriver(probe.config);
    await probe.close();
  });
  afterEach(async () => {
    await real?.close();
    team?.dispose();
  });

  it('an acquire the store applied but never confirmed is finished by the next status: held, with its push proof', async () => {
    const lossy = losingAnswers(real);
    const container = await open(alice, lossy.driver);
    lossy.lose('after-write');
    const error = await container.acquire().then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof LockBackendError, String(error));
    assert.match(error.message, /not known yet.*lockstep status/);
    assert.equal(fs.existsSync(path.join(lockstepDir(alice), 'session.json')), false, 'no session before the page is read');
    const status = expectOk(await team.cli(alice, ['status']), 'status');
    assert.deepEqual([status.state, status.grant], ['held-by-me', 1]);
    assert.equal(fs.existsSync(path.join(lockstepDir(alice), 'pending.json')), false, 'the pending acquire is settled');
    assert.ok(fs.existsSync(path.join(lockstepDir(alice), 'push.config')), 'the push proof is written');
    expectOk(await team.cli(alice, ['heartbeat']), 'heartbeat under the finished grant');
    expectError(await team.cli(bob, ['acquire']), 3, 'busy');
    team.assertNoTokenLeaked();
  });

  it('an acquire that never reached the store keeps its token, and acquiring again reuses it: one holder, one grant', async () => {
    const lossy = losingAnswers(real);
    const container = await open(alice, lossy.driver);
    lossy.lose('before-write');
    await assert.rejects(container.acquire(), LockBackendError);
    const pending = JSON.parse(fs.readFileSync(path.join(lockstepDir(alice), 'pending.json'), 'utf8')) as { token: string; grant: number };
    assert.equal(pending.grant, 1);
    const unsettled = expectOk(await team.cli(alice, ['status']), 'status');
    assert.equal(unsettled.state, 'free', 'the page does not show it: nothing is claimed');
    assert.equal(unsettled.pendingAcquire, 1, 'and the interrupted acquire is said, not left for the reader to guess');
    const text = await team.cli(alice, ['status'], { json: false });
    assert.match(text.stdout, /^Free\n[\s\S]*Your acquire of grant #1 was interrupted and the page does not show it yet/);
    assert.ok(fs.existsSync(path.join(lockstepDir(alice), 'pending.json')), 'kept while its write could still arrive');
    const doctor = await team.cli(alice, ['doctor']);
    const finding = (doctor.json.findings as { check: string; found: string; fix?: string }[]).find(f => /interrupted/.test(f.found));
    assert.ok(finding, JSON.stringify(doctor.json));
    assert.match(finding.fix ?? '', /lockstep acquire finishes it/);
    assert.equal(expectOk(await team.cli(alice, ['acquire']), 'acquire again').grant, 1);
    assert.equal(team.sessionToken(alice), pending.token, 'the retry is the same attempt');
    assert.equal(fs.existsSync(path.join(lockstepDir(alice), 'pending.json')), false);
  });

  it('a retried acquire whose first write lands while it retries holds the lock (the same attempt), not "already held elsewhere"', async () => {
    const lossy = losingAnswers(real);
    const container = await open(alice, lossy.driver);
    lossy.lose('late-write');
    await assert.rejects(container.acquire(), LockBackendError);
    // The retry reads the page (the held write lands right after), its own write then loses the race to it.
    const again = await open(alice, lossy.driver);
    assert.equal((await again.acquire()).grant, 1);
    assert.equal(expectOk(await team.cli(alice, ['status']), 'status').state, 'held-by-me');
  });

  it('an unconfirmed acquire whose grant went to someone else is dropped by the next command, and says nothing false', async () => {
    const lossy = losingAnswers(real);
    const container = await open(alice, lossy.driver);
    lossy.lose('before-write');
    await assert.rejects(container.acquire(), LockBackendError);
    assert.equal(expectOk(await team.cli(bob, ['acquire']), 'bob acquires').grant, 1);
    const status = expectOk(await team.cli(alice, ['status']), 'alice status');
    assert.deepEqual([status.state, status.holder.identity], ['held-by-other', bob.identity]);
    assert.equal(fs.existsSync(path.join(lockstepDir(alice), 'pending.json')), false, "dropped: grant #1 is bob's");
    assert.equal(fs.existsSync(path.join(lockstepDir(alice), 'session.json')), false);
  });

  it('a release the store applied but never confirmed is finished by the next release, which says so', async () => {
    expectOk(await team.cli(alice, ['acquire']), 'acquire');
    const lossy = losingAnswers(real);
    const container = await open(alice, lossy.driver);
    lossy.lose('after-write');
    await assert.rejects(container.release(), LockBackendError);
    const again = expectOk(await team.cli(alice, ['release']), 'release again');
    assert.equal(again.grant, 1);
    assert.equal(fs.existsSync(path.join(lockstepDir(alice), 'session.json')), false, 'the session is finished');
    assert.equal(fs.existsSync(path.join(lockstepDir(alice), 'push.config')), false);
    assert.equal(expectOk(await team.cli(alice, ['status']), 'status').state, 'free', 'not stale: the release happened');
  });

  it('a release whose lost answer a status finished in between: status says so, and release again answers that it landed', async () => {
    expectOk(await team.cli(alice, ['acquire']), 'acquire');
    const lossy = losingAnswers(real);
    const container = await open(alice, lossy.driver);
    lossy.lose('after-write');
    const error = await container.release().then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof LockBackendError, String(error));
    assert.match(error.message, /Whether the release reached the page is not known yet: `lockstep release` again/);
    const status = expectOk(await team.cli(alice, ['status']), 'status');
    assert.deepEqual([status.state, status.staleGrant, status.finishedRelease, status.pendingAcquire], ['free', null, 1, null]);
    assert.equal(
      expectOk(await team.cli(alice, ['status']), 'status again').finishedRelease,
      null,
      'said once, by the read that finished it',
    );
    const again = expectOk(await team.cli(alice, ['release']), 'release again');
    assert.deepEqual([again.grant, again.already], [1, true]);
    // A new grant ends that answer: a release without a session is again "you hold nothing".
    expectOk(await team.cli(alice, ['acquire']), 'acquire #2');
    expectOk(await team.cli(alice, ['release']), 'release #2');
    expectError(await team.cli(alice, ['release']), 1, 'refused', 'not-holder');
  });

  it('any other change whose answer was lost says its outcome is not known yet and where to look (a petition that landed)', async () => {
    expectOk(await team.cli(alice, ['acquire']), 'alice acquires');
    const lossy = losingAnswers(real);
    const container = await open(bob, lossy.driver);
    lossy.lose('after-write');
    const error = await container.petition().then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof LockBackendError, String(error));
    assert.match(
      error.message,
      /Whether this change reached the lock page is not known yet: `lockstep status` and `lockstep audit` show the page/,
    );
    await container.close();
    const status = expectOk(await team.cli(bob, ['status']), 'bob looks');
    assert.deepEqual(
      [status.state, status.position],
      ['queued', 1],
      'it had landed: running it again would have been refused as already queued',
    );
  });

  it('a clone the page names holder without a token for it hears the one fix from doctor', async () => {
    expectOk(await team.cli(alice, ['acquire']), 'acquire');
    fs.rmSync(path.join(lockstepDir(alice), 'session.json'));
    const doctor = await team.cli(alice, ['doctor']);
    const finding = (doctor.json.findings as { check: string; level: string; found: string; fix?: string }[]).find(f =>
      /no token for it/.test(f.found),
    );
    assert.ok(finding, JSON.stringify(doctor.json));
    assert.equal(finding.level, 'warning');
    assert.match(finding.fix ?? '', /clone or window that acquired it.*operator clears it/s);
    assert.match((await team.cli(alice, ['status'], { json: false })).stdout, /in another clone or session: work there/);
  });

  it('a live session whose push proof was lost (a kill between the two writes) gets it back from the next command', async () => {
    expectOk(await team.cli(alice, ['acquire']), 'acquire');
    fs.rmSync(path.join(lockstepDir(alice), 'push.config'));
    expectOk(await team.cli(alice, ['heartbeat']), 'heartbeat');
    assert.ok(fs.existsSync(path.join(lockstepDir(alice), 'push.config')));
  });
});

describe('landings are facts: a release names only what landed under its grant', function () {
  behaviourGroup(this, 'landings');
  this.timeout(120_000);
  let team: GitFixture;
  before(async () => {
    team = await createGitFixture({ members: ['alice', 'bob'], operators: [] });
  });
  after(() => team?.dispose());

  it('a release with nothing pushed names no landing, even when the remote moved before the grant', async () => {
    const alice = team.member('alice');
    const bob = team.member('bob');
    // bob lands a commit under his grant and releases: that landing is his.
    expectOk(await team.cli(bob, ['acquire']), 'bob acquires');
    fs.writeFileSync(path.join(bob.dir, 'bob.txt'), 'bob\n');
    team.git(bob, 'add', 'bob.txt');
    team.git(bob, 'commit', '--quiet', '-m', 'bob');
    team.git(bob, 'push', '--quiet', 'origin', 'main');
    const his = team.git(bob, 'rev-parse', 'HEAD').trim();
    assert.equal(expectOk(await team.cli(bob, ['release']), 'bob releases').landed, his.slice(0, 12));
    // alice acquires with a stale view of the remote, then pulls bob's work and pushes nothing.
    expectOk(await team.cli(alice, ['acquire']), 'alice acquires');
    team.git(alice, 'pull', '--quiet', '--ff-only', 'origin', 'main');
    const released = expectOk(await team.cli(alice, ['release']), 'alice releases');
    assert.equal(released.landed, null, "bob's commit is not alice's landing");
    // A third grant with nothing at all: the remote's tip is named by nobody.
    expectOk(await team.cli(bob, ['acquire']), 'bob acquires again');
    team.git(bob, 'pull', '--quiet', '--ff-only', 'origin', 'main');
    assert.equal(expectOk(await team.cli(bob, ['release']), 'bob releases again').landed, null);
  });

  it("a commit made before the grant and pushed under it is the grant's landing", async () => {
    const alice = team.member('alice');
    team.git(alice, 'pull', '--quiet', '--ff-only', 'origin', 'main');
    fs.writeFileSync(path.join(alice.dir, 'early.txt'), 'early\n');
    team.git(alice, 'add', 'early.txt');
    team.git(alice, 'commit', '--quiet', '-m', 'committed before acquiring');
    expectOk(await team.cli(alice, ['acquire']), 'acquire');
    team.git(alice, 'push', '--quiet', 'origin', 'main');
    const mine = team.git(alice, 'rev-parse', 'HEAD').trim();
    assert.equal(expectOk(await team.cli(alice, ['release']), 'release').landed, mine.slice(0, 12));
  });
});

describe('git driver: an acquire whose push outlasts the git timeout', function () {
  behaviourGroup(this, 'unknown outcomes');
  this.timeout(180_000);
  let team: FencingTeam;
  before(async () => {
    team = await createFencingTeam({ members: ['alice'], driver: 'git', initArgs: ['--driver', 'git'], transport: 'daemon' });
  });
  after(() => team?.dispose());

  it('is finished by the next status once the server completes it: alice holds, her proof lands her work', async () => {
    const [alice] = team.members;
    const hook = path.join(team.remote, 'hooks', 'pre-receive');
    const guard = path.join(team.remote, 'hooks', 'pre-receive.guard');
    const gate = path.join(team.root, 'gate');
    const entered = path.join(team.root, 'entered');
    fs.renameSync(hook, guard);
    // The server holds the push until the test opens the gate: a server slower than the client's timeout.
    fs.writeFileSync(hook, `#!/bin/sh\n: > '${entered}'\nwhile [ -e '${gate}' ]; do sleep 0.05; done\nexec '${guard}' "$@"\n`, {
      mode: 0o755,
    });
    fs.writeFileSync(gate, '');
    const lockRefs = () => team.gitOk(team.remote, 'for-each-ref', '--format=%(objectname)', 'refs/lockstep/');
    const before = await lockRefs();
    const acquire = await team.lockstep(alice.dir, ['acquire'], { env: { LOCKSTEP_GIT_TIMEOUT_SECONDS: '3' } });
    assert.equal(acquire.code, 4, acquire.stdout + acquire.stderr);
    assert.ok(fs.existsSync(entered), 'the push reached the server');
    assert.match(acquire.json.error.message, /within 3 s.*gitTimeoutSeconds.*LOCKSTEP_GIT_TIMEOUT_SECONDS.*not known yet/s);
    fs.rmSync(gate);
    await waitFor(async () => (await lockRefs()) !== before, { timeoutMs: 60_000, description: 'the server applied the held push' });
    const status = expectOk(await team.lockstep(alice.dir, ['status']), 'status');
    assert.deepEqual([status.state, status.grant], ['held-by-me', 1]);
    const mine = await team.commit(alice, 'alice.txt');
    const pushed = await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']);
    assert.equal(pushed.code, 0, pushed.stderr);
    assert.equal(team.remoteSha(), mine);
    assert.equal(expectOk(await team.lockstep(alice.dir, ['release']), 'release').landed, mine.slice(0, 12));
    team.assertNoSecretLeaked();
  });

  it('a push whose guard restores the lost push proof is stopped by the client with "push again", and the next push lands', async () => {
    const [alice] = team.members;
    expectOk(await team.lockstep(alice.dir, ['acquire']), 'acquire');
    // A kill between the session and its proof: the proof file is gone, git starts the push without it.
    fs.rmSync(path.join(alice.dir, '.git', 'lockstep', 'push.config'));
    const mine = await team.commit(alice, 'after-a-kill.txt');
    const main = team.remoteSha();
    const first = await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']);
    assert.notEqual(first.code, 0, 'the first push is stopped');
    assert.match(first.stderr, /wrote its lost push proof\), after git had read this push's options.*Run the same push again/s);
    assert.doesNotMatch(first.stderr, /remote: lockstep/, 'stopped by the client, before the server refused it');
    assert.equal(team.remoteSha(), main);
    const again = await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(team.remoteSha(), mine);
    expectOk(await team.lockstep(alice.dir, ['release']), 'release');
  });
});
