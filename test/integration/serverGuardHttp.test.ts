import * as assert from 'node:assert/strict';
import { keyDigest, namespaceDigest } from '../../src/core/names';
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
      members: ['alice', 'bob', 'ops', 'mallory'], operators: ['ops@example.com'], driver: 'git',
      serverInstallArgs: ['--pusher-variable', 'REMOTE_USER', '--pusher', 'alice=alice@example.com', '--pusher', 'bob=bob@example.com', '--pusher', 'ops=ops@example.com'],
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
    assert.equal(ok(await team.lockstep(alice.dir, ['acquire', '--ttl', '3']), 'alice acquires').grant, 1);
    const sha = await team.commit(alice, 'a.txt');
    ok(await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main']), 'alice lands');
    assert.equal(team.remoteSha(), sha);
  });

  it('bob cannot petition in alice\'s name, and a server user without an identity changes nothing', async () => {
    await refusedByServer(() => team.lockstep(bob.dir, ['petition'], { env: { LOCKSTEP_IDENTITY: ops.identity } }), 'bob as ops');
    await refusedByServer(() => team.lockstep(team.member('mallory').dir, ['petition']), 'mallory, unmapped');
    ok(await team.lockstep(bob.dir, ['petition']), 'bob petitions as bob');
  });

  it('bob cannot clear the silent lock in the operator\'s name; the operator can, and the audit names the operator', async () => {
    await waitUntilExpired(team, ops.dir);
    await refusedByServer(() => team.lockstep(bob.dir, ['clear', '--reason', 'I am ops'], { env: { LOCKSTEP_IDENTITY: ops.identity } }), 'bob clears as ops');
    assert.equal(ok(await team.lockstep(ops.dir, ['clear', '--reason', 'alice is away']), 'ops clears').clearedGrant, 1);
    const audit = ok(await team.lockstep(ops.dir, ['audit']), 'audit').audit as { who: string; action: string; outcome: string }[];
    const clears = audit.filter(line => line.action === 'clear');
    assert.deepEqual(clears.map(line => [line.who, line.outcome]), [[ops.identity, 'done']]);
    team.assertNoSecretLeaked();
  });
});
