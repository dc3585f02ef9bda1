import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { inspect } from 'node:util';
import { Etcd3 } from 'etcd3';
import { resolveConfig, type LockManagerOptions } from '../../../src/core/config';
import { openDriver } from '../../../src/core/drivers';
import { LockBackendError, LockConfigurationError, exitCodeFor } from '../../../src/core/errors';
import { createLockManager } from '../../../src/core/leases';
import { keyDigest } from '../../../src/core/names';
import type { Driver } from '../../../src/core/stores/store';
import { hashToken, newOwnerToken } from '../../../src/core/tokens';
import { describeDriverContract } from '../../contract/driverContract';
import { freePort } from '../../helpers/freePort';
import { waitFor } from '../../helpers/waitFor';
import { EtcdCluster, requireEtcd } from './etcdCluster';

const randomPrefix = () => `lockstep-test-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;

describe('etcd driver (live three-member etcd cluster)', function () {
  this.timeout(60_000);
  let cluster: EtcdCluster;
  let admin: Etcd3;
  const prefix = randomPrefix();
  const drivers: Driver[] = [];

  const options = (extra: LockManagerOptions = {}): LockManagerOptions => ({
    driver: 'etcd',
    prefix,
    etcdEndpoints: cluster.endpoints,
    connectTimeoutMs: 1_000,
    commandTimeoutMs: 2_000,
    ...extra,
  });
  const open = async (extra: LockManagerOptions = {}): Promise<Driver> => {
    const driver = await openDriver(resolveConfig(options(extra), {}));
    drivers.push(driver);
    return driver;
  };
  const manager = (extra: LockManagerOptions = {}) => createLockManager({ ...options(extra), env: {} });
  const owner = () => hashToken(newOwnerToken());
  let keyCounter = 0;
  const freshKey = () => keyDigest(prefix, `etcd-${++keyCounter}`);

  before(async function () {
    requireEtcd(this);
    cluster = await EtcdCluster.start();
    admin = new Etcd3({ hosts: cluster.endpoints.split(',') });
  });

  after(async () => {
    await Promise.all(drivers.map(d => d.close()));
    admin?.close();
    await cluster?.dispose();
  });

  // The shared contract every driver meets, on this cluster and prefix.
  describeDriverContract('etcd', () => open());

  describe('plain leases', () => {
    it('issues tokens 1, 2, 3 per name: a counter in the claim transaction, kept across release', async () => {
      const driver = await open();
      const key = freshKey();
      for (const expected of [1, 2, 3]) {
        const me = owner();
        const claim = await driver.claim(key, me, 30_000, Date.now());
        assert.ok(claim.claimed);
        assert.equal(claim.fencingToken, expected);
        assert.equal(await driver.release(key, me, Date.now()), 'released');
      }
    });

    it('lets exactly one of many simultaneous claims through, across connections', async () => {
      const contenders = await Promise.all(Array.from({ length: 8 }, () => open()));
      const key = freshKey();
      const claims = await Promise.all(contenders.map(d => d.claim(key, owner(), 30_000, Date.now())));
      assert.equal(claims.filter(c => c.claimed).length, 1);
    });
  });

  describe('records', () => {
    it('reads null, writes against the revision read, and refuses stale writes', async () => {
      const driver = await open();
      const key = freshKey();
      assert.equal(await driver.read(key), null);
      const first = await driver.compareAndSwap(key, null, { n: 1 }, { summary: 'first' });
      assert.ok(first.ok);
      assert.deepEqual(await driver.compareAndSwap(key, null, { n: 9 }, { summary: 'again' }), { ok: false });
      const second = await driver.compareAndSwap(key, first.revision, { n: 2 }, { summary: 'second' });
      assert.ok(second.ok);
      assert.ok(Number(second.revision) > Number(first.revision));
      assert.deepEqual(await driver.compareAndSwap(key, first.revision, { n: 3 }, { summary: 'stale' }), { ok: false });
      assert.deepEqual(await driver.read(key), { value: { n: 2 }, revision: second.revision });
    });

    it('lets exactly one of many writers on the same revision win', async () => {
      const writers = await Promise.all(Array.from({ length: 6 }, () => open()));
      const key = freshKey();
      const base = await writers[0]!.compareAndSwap(key, null, { n: 0 }, { summary: 'base' });
      assert.ok(base.ok);
      const results = await Promise.all(writers.map((w, i) => w.compareAndSwap(key, base.revision, { n: i + 1 }, { summary: 'race' })));
      assert.equal(results.filter(r => r.ok).length, 1);
    });

    it('hears a write made on another connection through its watch', async () => {
      const [watching, writing] = [await open(), await open()];
      const key = freshKey();
      const calls: number[] = [];
      const subscription = watching.watch!(key, () => calls.push(performance.now()));
      try {
        await waitFor(() => calls.length >= 1, { description: 'the watch in place' });
        const start = performance.now();
        assert.ok((await writing.compareAndSwap(key, null, { v: 1 }, { summary: 'x' })).ok);
        await waitFor(() => calls.length >= 2, { description: 'onChange after the write' });
        console.log(`      watch latency: ${(calls[calls.length - 1]! - start).toFixed(2)} ms from the start of the write`);
      } finally {
        subscription.dispose();
      }
    });

    it('states its health: up once in place, down when its member is gone, up again with one read when it is back', async () => {
      // Connected to one member only, so that killing it takes the watch down (the other two keep the quorum).
      const member = cluster.members[0]!;
      const watching = await open({ etcdEndpoints: member.clientUrl });
      // The writer speaks to the two members that stay (a write is never re-sent to another member).
      const writing = await open({
        etcdEndpoints: cluster.members
          .filter(m => m !== member)
          .map(m => m.clientUrl)
          .join(','),
      });
      const key = freshKey();
      const events: string[] = [];
      const subscription = watching.watch!(key, () => events.push('change'), { onHealth: healthy => events.push(healthy ? 'up' : 'down') });
      try {
        await waitFor(() => subscription.live?.healthy === true, { description: 'the watch in place and healthy' });
        assert.deepEqual(events.slice(0, 2), ['up', 'change'], 'up, then the read that follows it');
        assert.equal(subscription.live?.via, 'etcd watch');
        await member.kill();
        await waitFor(() => subscription.live?.healthy === false, { timeoutMs: 30_000, description: 'the watch down with its member' });
        await cluster.leader(); // another is elected if it was the leader
        assert.ok((await writing.compareAndSwap(key, null, { v: 1 }, { summary: 'while it was down' })).ok);
        const before = events.length;
        await cluster.restart(member);
        await waitFor(() => subscription.live?.healthy === true, { timeoutMs: 45_000, description: 'the watch up again' });
        await waitFor(() => events.slice(before).includes('change'), { description: 'a read after it came back' });
        assert.equal(events.slice(before).filter(e => e === 'up').length, 1, events.join(' '));
      } finally {
        subscription.dispose();
        if (!member.running) await cluster.restart(member);
      }
    });

    it('stores only <prefix>/l<digest> and <prefix>/r<digest> keys: no lock name reaches etcd', async () => {
      const lockstep = manager();
      const held = await lockstep.acquire('a-secret-lock-name');
      assert.ok(held.acquired);
      await held.release();
      await lockstep.close();
      const keys = await admin.getAll().prefix(`${prefix}/`).keys();
      assert.ok(keys.length > 0);
      for (const key of keys) assert.match(key, new RegExp(`^${prefix}/[lr][0-9a-f]{64}$`));
      assert.ok(!keys.some(k => k.includes('a-secret-lock-name')));
    });
  });

  describe('cluster', () => {
    it('describes the cluster: three members, a majority of two, a leader', async () => {
      const driver = await open();
      const deployment = await driver.describeDeployment!();
      assert.deepEqual(
        { kind: deployment.kind, members: deployment.members, quorum: deployment.quorum, leaderSeen: deployment.leaderSeen },
        { kind: 'etcd', members: 3, quorum: 2, leaderSeen: true },
      );
    });

    it('keeps every acknowledged write and the fencing counter when the leader is killed', async () => {
      const driver = await open();
      const key = freshKey();
      const record = freshKey();
      const a = owner();
      const first = await driver.claim(key, a, 30_000, Date.now());
      assert.ok(first.claimed);
      const written = await driver.compareAndSwap(record, null, { grant: 7 }, { summary: 'before the kill' });
      assert.ok(written.ok);
      const leader = await cluster.leader();
      await leader.kill();
      try {
        // The cluster elects another leader; operations may fail with a typed error until it has.
        const b = owner();
        const second = await waitFor(
          async () => {
            try {
              assert.equal(await driver.release(key, a, Date.now()), 'released');
            } catch (error) {
              if (error instanceof LockBackendError) return undefined;
              throw error;
            }
            return driver.claim(key, b, 30_000, Date.now());
          },
          { timeoutMs: 20_000, description: 'the lease claimed again after the failover' },
        );
        assert.ok(second.claimed);
        assert.equal(second.fencingToken, first.fencingToken + 1);
        assert.deepEqual(await driver.read(record), { value: { grant: 7 }, revision: written.revision });
      } finally {
        await cluster.restart(leader);
        await cluster.waitHealthy();
      }
    });

    it('fails with a typed, retryable error while no quorum is left, and works again once it is back', async () => {
      const driver = await open({ commandTimeoutMs: 1_000 });
      const key = freshKey();
      const before = await driver.compareAndSwap(key, null, { n: 1 }, { summary: 'before' });
      assert.ok(before.ok);
      const leader = await cluster.leader();
      const gone = cluster.members.filter(m => m !== leader);
      for (const member of gone) await member.kill();
      try {
        const error = await driver.compareAndSwap(key, before.revision, { n: 2 }, { summary: 'no quorum' }).then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(error instanceof LockBackendError, String(error));
        assert.equal(error.retryable, true);
        assert.equal(exitCodeFor(error), 4);
        assert.match(error.message, /leader|quorum|timeout/i);
      } finally {
        for (const member of gone) await cluster.restart(member);
        await cluster.waitHealthy();
      }
      const after = await waitFor(
        async () => {
          try {
            return await driver.read(key);
          } catch (error) {
            if (error instanceof LockBackendError) return undefined;
            throw error;
          }
        },
        { timeoutMs: 20_000, description: 'reads served again' },
      );
      // Either the write before the outage stands, or (had the write during it been committed after all) that one:
      // never an empty or older page.
      assert.ok(after !== null && [1, 2].includes((after.value as { n: number }).n));
    });
  });

  describe('configuration and failures', () => {
    it('refuses to run without an explicit prefix, naming LOCKSTEP_PREFIX', async () => {
      const error = await openDriver(resolveConfig({ driver: 'etcd', etcdEndpoints: cluster.endpoints }, {})).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof LockConfigurationError);
      assert.match(error.message, /LOCKSTEP_PREFIX/);
    });

    it('keeps credentials and addresses out of errors for unreachable endpoints', async () => {
      const closedPort = await freePort();
      const lockstep = manager({ etcdEndpoints: `http://lease-bot:Sup3r-Secret-77@127.0.0.1:${closedPort}`, connectTimeoutMs: 500 });
      const error = await lockstep.acquire('credential-check').then(
        () => undefined,
        (e: unknown) => e,
      );
      await lockstep.close();
      assert.ok(error instanceof LockBackendError, String(error));
      assert.equal(exitCodeFor(error), 4);
      const everything = [error.message, error.stack ?? '', inspect(error, { depth: 10 }), JSON.stringify(error)].join('\n');
      for (const secret of ['Sup3r-Secret-77', 'lease-bot', 'credential-check', String(closedPort)])
        assert.ok(!everything.includes(secret), `the error shows ${secret}`);
      const shown = inspect(resolveConfig(options({ etcdEndpoints: `http://lease-bot:Sup3r-Secret-77@127.0.0.1:${closedPort}` }), {}));
      assert.ok(!shown.includes('Sup3r-Secret-77'), shown);
    });

    it('rejects malformed endpoints as a configuration error without echoing them', async () => {
      const lockstep = manager({ etcdEndpoints: 'redis://someone:Pass-Word-55@example.invalid' });
      const error = await lockstep.acquire('url-check').then(
        () => undefined,
        (e: unknown) => e,
      );
      await lockstep.close();
      assert.ok(error instanceof LockConfigurationError, String(error));
      assert.ok(!error.message.includes('Pass-Word-55') && !error.message.includes('someone'));
    });

    it('authenticates with the user and password in the endpoints, and refuses a wrong password without showing it', async () => {
      const secured = await EtcdCluster.start(1);
      try {
        const endpoint = secured.endpoints;
        const etcdctl = (...args: string[]) => execFileSync('etcdctl', ['--endpoints', endpoint, ...args], { stdio: 'pipe' });
        etcdctl('user', 'add', 'root', '--new-user-password=Root-Pass-90', '--interactive=false');
        etcdctl('auth', 'enable');
        const withPassword = (password: string) => endpoint.replace('http://', `http://root:${password}@`);
        const good = manager({ etcdEndpoints: withPassword('Root-Pass-90') });
        const held = await good.acquire('auth-check');
        assert.ok(held.acquired);
        assert.equal(await held.release(), true);
        await good.close();
        const bad = manager({ etcdEndpoints: withPassword('Wrong-Pass-34') });
        const error = await bad.acquire('auth-check').then(
          () => undefined,
          (e: unknown) => e,
        );
        await bad.close();
        assert.ok(error instanceof LockBackendError, String(error));
        assert.equal(error.retryable, false);
        assert.match(error.message, /user or password/);
        const shown = [error.message, inspect(error, { depth: 10 })].join('\n');
        assert.ok(!shown.includes('Wrong-Pass-34') && !shown.includes('Root-Pass-90'));
      } finally {
        await secured.dispose();
      }
    });
  });
});
