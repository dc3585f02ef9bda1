import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SECOND } from '../../src/core/clock';
import * as protocol from '../../src/core/lockRecord';
import { keyDigest, namespaceDigest } from '../../src/core/names';
import { stampEnv, stampOf, transitionSubject } from '../../src/core/stores/git/recordCommit';
import { hashProof, hashToken } from '../../src/core/tokens';
import { createFencingTeam, waitUntilExpired, type CliResult, type FencingTeam, type TeamMember } from '../helpers/fencingFixture';
import { startGitHttpServer, type GitHttpServer } from '../helpers/gitHttpServer';

/**
 * Who pushes, where the server knows it: the shared remote behind `git http-backend` with basic
 * authentication, the server guard pinned with `--pusher-variable REMOTE_USER` and a map of server
 * users to identities. A lock-record change or an operator's clear in another identity's name is
 * refused; the same change by that identity goes through (the control).
 */
describe('server guard over authenticated HTTP (REMOTE_USER mapped to identities)', function () {
  this.timeout(180_000);
  let team: FencingTeam;
  let http: GitHttpServer;
  let alice: TeamMember, bob: TeamMember, ops: TeamMember;
  let recordRef: string;
  const users = { alice: 'alice-pw', bob: 'bob-pw', ops: 'ops-pw', mallory: 'mallory-pw' };

  const ok = (result: CliResult, what: string): any => {
    assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
    return result.json;
  };
  const lockRef = () => team.gitOk(team.remote, 'rev-parse', '--verify', '--quiet', recordRef).catch(() => '');
  /** The lock ref did not move, and the refusal is the git remote's (exit 4, the hook declined). */
  async function refusedByServer(run: () => Promise<CliResult>, what: string): Promise<void> {
    const before = await lockRef();
    const result = await run();
    assert.equal(result.code, 4, `${what}: the remote refuses the write\n${result.stdout}${result.stderr}`);
    assert.match(result.json.error.message, /The git remote refused to update a lock ref/);
    assert.equal(await lockRef(), before, `${what}: the lock ref did not move`);
  }

  before(async () => {
    team = await createFencingTeam({
      members: ['alice', 'bob', 'ops', 'mallory'],
      operators: ['ops@example.com'],
      driver: 'git',
      serverInstallArgs: [
        '--pusher-variable',
        'REMOTE_USER',
        '--pusher',
        'alice=alice@example.com',
        '--pusher',
        'bob=bob@example.com',
        '--pusher',
        'ops=ops@example.com',
      ],
    });
    [alice, bob, ops] = team.members;
    http = await startGitHttpServer(team.root, users);
    for (const member of team.members) await team.gitOk(member.dir, 'remote', 'set-url', 'origin', http.urlFor(member.name, 'remote.git'));
    recordRef = `refs/lockstep/${namespaceDigest('lockstep')}/records/${keyDigest('lockstep', `container:${team.container}`)}`;
  });
  after(async () => {
    await http?.close();
    team?.dispose();
  });

  it('the pinned settings say who names pushers', async () => {
    const shown = await team.lockstep(team.remote, ['hooks', 'status', '--server'], { json: false });
    assert.match(shown.stdout, /pushers: named by REMOTE_USER; 3 mapped/);
  });

  it('alice acquires and lands over HTTP in her own name (control)', async () => {
    // A lease with 15 s left, long enough for a commit and a guarded push over HTTP on a loaded machine; the clear below
    // waits for it to lapse. It is the shortest lease (60 s) dated 45 s back (lapsingGrant.ts): the server guard takes
    // a grant dated within its skew when it is legal by the server's clock too.
    assert.equal((await team.lapsingGrant(alice.dir, 15_000)).grant, 1);
    const sha = await team.commit(alice, 'a.txt');
    ok(await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']), 'alice lands');
    assert.equal(team.remoteSha(), sha);
  });

  it("bob cannot petition in alice's name, and a server user without an identity changes nothing", async () => {
    await refusedByServer(() => team.lockstep(bob.dir, ['petition'], { env: { LOCKSTEP_IDENTITY: ops.identity } }), 'bob as ops');
    await refusedByServer(() => team.lockstep(team.member('mallory').dir, ['petition']), 'mallory, unmapped');
    ok(await team.lockstep(bob.dir, ['petition']), 'bob petitions as bob');
  });

  it("bob cannot clear the silent lock in the operator's name; the operator can, and the audit names the operator", async () => {
    await waitUntilExpired(team, ops.dir);
    await refusedByServer(
      () => team.lockstep(bob.dir, ['clear', '--reason', 'I am ops'], { env: { LOCKSTEP_IDENTITY: ops.identity } }),
      'bob clears as ops',
    );
    assert.equal(ok(await team.lockstep(ops.dir, ['clear', '--reason', 'alice is away']), 'ops clears').clearedGrant, 1);
    const audit = ok(await team.lockstep(ops.dir, ['audit']), 'audit').audit as { who: string; action: string; outcome: string }[];
    const clears = audit.filter(line => line.action === 'clear');
    assert.deepEqual(
      clears.map(line => [line.who, line.outcome]),
      [[ops.identity, 'done']],
    );
    team.assertNoSecretLeaked();
  });

  it("ops cannot take over bob's live lease in ops's own name with an acquire dated ahead of the server's clock", async () => {
    const held = ok(await team.lockstep(bob.dir, ['acquire', '--ttl', '110']), 'bob, the queue head, acquires for 110 s');
    const before = await lockRef();
    await team.gitOk(ops.dir, 'fetch', '--quiet', 'origin', `+${recordRef}:refs/forge/tip`);
    const tip = await team.gitOk(ops.dir, 'rev-parse', 'refs/forge/tip');
    const record = JSON.parse(await team.gitOk(ops.dir, 'cat-file', 'blob', `${tip}:record.json`));
    assert.equal(record.holder.grant, held.grant);
    const lineAt = record.holder.expiresAt + SECOND;
    assert.ok(
      lineAt - Date.now() < 115 * SECOND && record.holder.expiresAt - Date.now() > 10 * SECOND,
      'the attack runs within the skew, while bob is live',
    );
    const taken = protocol.acquire(
      record,
      { leaseTtlMs: 7_200_000, windowMs: 900_000, operators: [ops.identity] },
      { identity: ops.identity, tokenHash: hashToken('f'.repeat(64)), proofHash: hashProof('a'.repeat(64)) },
      lineAt,
    );
    assert.ok(taken.ok, 'at its own time the acquire is legal');
    // Written exactly as a lockstep client writes it, in ops's own name: only the time rule stands in the way.
    const line = taken.record.audit[taken.record.audit.length - 1];
    const blob = (await team.git(ops.dir, ['hash-object', '-w', '--stdin'], { input: JSON.stringify(taken.record) })).stdout.trim();
    const tree = (await team.git(ops.dir, ['mktree'], { input: `100644 blob ${blob}\trecord.json\n` })).stdout.trim();
    const commit = (
      await team.git(ops.dir, ['commit-tree', '--no-gpg-sign', tree, '-p', tip], {
        input: `${transitionSubject(line)}\n\nLockstep-Write: ${randomBytes(8).toString('hex')}\n`,
        env: stampEnv(stampOf(line)),
      })
    ).stdout.trim();
    const pushed = await team.git(ops.dir, ['push', '--no-verify', 'origin', `${commit}:${recordRef}`]);
    assert.notEqual(pushed.code, 0, `the takeover must be refused\n${pushed.stderr}`);
    assert.match(
      pushed.stderr,
      /acquire by ops@example\.com is dated \d+ s from the server's clock and is not legal by the server's clock/,
    );
    assert.equal(await lockRef(), before, 'the lock ref did not move');
    // Control: the holder lands in his own name.
    await team.gitOk(bob.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
    const sha = await team.commit(bob, 'b.txt');
    ok(await team.git(bob.dir, ['push', 'origin', 'HEAD:refs/heads/main']), 'bob lands');
    assert.equal(team.remoteSha(), sha);
    team.assertNoSecretLeaked();
  });
});
