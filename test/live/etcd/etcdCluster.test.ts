import * as assert from 'node:assert/strict';
import { EtcdCluster, requireEtcd } from './etcdCluster';

// The harness itself: three members on loopback, a leader, a new leader after the old one is killed, and a
// killed member that rejoins when started again.
describe('etcd cluster harness (live etcd)', function () {
  this.timeout(60_000);
  let cluster: EtcdCluster | undefined;

  before(async function () {
    requireEtcd(this);
    cluster = await EtcdCluster.start();
  });
  after(async () => {
    await cluster?.dispose();
  });

  it('runs three members with one leader, on distinct loopback ports', async () => {
    const c = cluster!;
    assert.equal(c.members.length, 3);
    assert.equal(new Set(c.members.flatMap(m => [m.clientPort, m.peerPort])).size, 6);
    assert.equal(c.endpoints.split(',').length, 3);
    const leader = await c.leader();
    assert.ok(leader.pid !== undefined);
  });

  it('elects another leader when the leader is killed, and the killed member rejoins on restart', async () => {
    const c = cluster!;
    const old = await c.leader();
    await old.kill();
    assert.equal(old.running, false);
    const next = await c.leader();
    assert.notEqual(next.name, old.name);
    await c.restart(old);
    assert.equal(await old.healthy(), true, old.output);
  });

  it('keeps a quorum while one member is paused', async () => {
    const c = cluster!;
    const follower = c.members.find(m => m.running)!;
    follower.pause();
    try {
      await c.waitHealthy();
    } finally {
      follower.unpause();
    }
    await c.waitHealthy();
  });
});
