import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createGitFixture, type GitFixture } from '../../helpers/gitFixture';
import { EtcdCluster, requireEtcd } from './etcdCluster';

/**
 * One lock page per container on etcd, through real `lockstep` processes: `init --driver etcd` commits the
 * driver, the prefix and the members' endpoints without the password; `status` and `doctor` show the cluster
 * (members, majority, leader) and never the password; the same members in another order are the same page,
 * another member list is another page (exit 5).
 */
describe('lockstep init, status and doctor on the etcd driver (live three-member etcd cluster)', function () {
  this.timeout(120_000);
  let cluster: EtcdCluster;
  let team: GitFixture;
  const prefix = `lockstep-test-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  const PASSWORD = 'Not-A-Real-Pass-31';

  before(async function () {
    requireEtcd(this);
    cluster = await EtcdCluster.start();
    team = await createGitFixture({
      members: ['ana', 'ben'],
      operators: ['ana'],
      initArgs: ['--driver', 'etcd'],
      env: { LOCKSTEP_ETCD_ENDPOINTS: cluster.endpoints, LOCKSTEP_PREFIX: prefix },
    });
  });

  after(async () => {
    team?.dispose();
    await cluster?.dispose();
  });

  it('init committed driver etcd, the prefix and the endpoints (sorted); a clone with no LOCKSTEP_* reads the page', async () => {
    const ana = team.member('ana');
    const file = JSON.parse(fs.readFileSync(path.join(ana.dir, '.lockstep.json'), 'utf8'));
    const sorted = cluster.endpoints.split(',').sort().join(',');
    assert.deepEqual([file.driver, file.prefix, file.etcdEndpoints], ['etcd', prefix, sorted]);
    const bare = { LOCKSTEP_ETCD_ENDPOINTS: undefined, LOCKSTEP_PREFIX: undefined, LOCKSTEP_PATH: undefined };
    const acquired = await team.cli(ana, ['acquire'], { env: bare });
    assert.equal(acquired.code, 0, acquired.stdout + acquired.stderr);
    assert.equal(acquired.json.grant, 1);
    const status = await team.cli(team.member('ben'), ['status'], { env: bare });
    assert.deepEqual(status.json.page, { driver: 'etcd', location: sorted, prefix, container: team.container });
    const released = await team.cli(ana, ['release'], { env: bare });
    assert.equal(released.code, 0, released.stdout + released.stderr);
  });

  it('status and doctor show members, majority and leader for the members in any order, and never a password written into the endpoints', async () => {
    const ben = team.member('ben');
    const reversed = cluster.endpoints.split(',').reverse().join(',');
    const status = await team.cli(ben, ['status'], { json: false, env: { LOCKSTEP_ETCD_ENDPOINTS: reversed } });
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.match(status.stdout, /Deployment: etcd, 3 member\(s\), a leader answers; each write is committed on a majority of 2/);
    const doctor = await team.cli(ben, ['doctor'], { env: { LOCKSTEP_ETCD_ENDPOINTS: reversed } });
    const cluster3 = doctor.json.findings.find((f: { check: string }) => f.check === 'cluster');
    assert.equal(cluster3?.level, 'ok', JSON.stringify(doctor.json));
    assert.match(cluster3.found, /3 member\(s\) with a leader.*majority of 2/);
    // A user and password on a cluster without authentication: refused as such, and still never printed.
    const withPassword = reversed.replace(/http:\/\//g, `http://root:${PASSWORD}@`);
    const refused = await team.cli(ben, ['status'], { env: { LOCKSTEP_ETCD_ENDPOINTS: withPassword } });
    assert.equal(refused.code, 4, refused.stdout + refused.stderr);
    assert.match(refused.json.error.message, /authentication turned off/);
    for (const printed of [status.stdout, status.stderr, doctor.stdout, doctor.stderr, refused.stdout, refused.stderr])
      assert.ok(!printed.includes(PASSWORD));
  });

  it('doctor names a cluster without quorum as an error with its fix', async () => {
    const ben = team.member('ben');
    const leader = await cluster.leader();
    const others = cluster.members.filter(m => m !== leader);
    for (const member of others) await member.kill();
    try {
      const doctor = await team.cli(ben, ['doctor'], { env: {}, timeoutMs: 60_000 });
      assert.equal(doctor.code, 1, doctor.stdout + doctor.stderr);
      const finding = doctor.json.findings.find((f: { check: string }) => f.check === 'cluster');
      assert.equal(finding?.level, 'error', JSON.stringify(doctor.json));
      assert.ok(finding.fix);
    } finally {
      for (const member of others) await cluster.restart(member);
      await cluster.waitHealthy();
    }
  });

  it('another member list is another page: refused (exit 5), naming LOCKSTEP_ETCD_ENDPOINTS', async () => {
    const ben = team.member('ben');
    const fewer = cluster.endpoints.split(',').slice(0, 2).join(',');
    const attempt = await team.cli(ben, ['acquire'], { env: { LOCKSTEP_ETCD_ENDPOINTS: fewer } });
    assert.equal(attempt.code, 5, attempt.stdout + attempt.stderr);
    assert.equal(attempt.json.error.reason, 'no-page');
    assert.match(attempt.json.error.message, /LOCKSTEP_ETCD_ENDPOINTS/);
  });
});
