import { spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Redis from 'ioredis';
import { replicasFromInfo } from '../../../src/core/stores/redis/deployment';
import { inCi } from '../../helpers/ci';
import { waitFor } from '../../helpers/waitFor';
import { endProcess, freePort, RedisServer, spawnUntilReady } from '../redis/redisServer';

/**
 * Replicated Redis deployments for the live suites, from Debian's redis-server and redis-sentinel:
 * every process on its own free loopback port, persistence off, stopped by PID.
 */

export const MASTER_NAME = 'lockstep-ha';

/** Sentinel timings: quick enough for a test run, slow enough not to flap on a loaded 2-core machine. */
const DOWN_AFTER_MS = 1_000;
const FAILOVER_TIMEOUT_MS = 10_000;

/** A replica's first sync starts at once (Redis 7 waits 5 s by default to batch replicas). */
const QUICK_SYNC = ['--repl-diskless-sync-delay', '0'];

/** 1 master, 2 replicas, 3 sentinels (quorum 2). */
export class SentinelDeployment {
  private constructor(
    readonly servers: RedisServer[],
    readonly sentinelPorts: number[],
    private readonly sentinels: ChildProcess[],
    private readonly dir: string,
  ) {}

  static async start(): Promise<SentinelDeployment> {
    const master = await RedisServer.start(QUICK_SYNC);
    const replicas = await Promise.all(
      [0, 1].map(() => RedisServer.start([...QUICK_SYNC, '--replicaof', '127.0.0.1', String(master.port)])),
    );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-sentinel-'));
    const ports: number[] = [];
    const sentinels: ChildProcess[] = [];
    const deployment = new SentinelDeployment([master, ...replicas], ports, sentinels, dir);
    try {
      for (let i = 0; i < 3; i++) {
        const port = await freePort();
        const conf = path.join(dir, `sentinel-${i}.conf`);
        fs.writeFileSync(
          conf,
          [
            `port ${port}`,
            'bind 127.0.0.1',
            `dir ${dir}`,
            'daemonize no',
            `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${master.port} 2`,
            `sentinel down-after-milliseconds ${MASTER_NAME} ${DOWN_AFTER_MS}`,
            `sentinel failover-timeout ${MASTER_NAME} ${FAILOVER_TIMEOUT_MS}`,
            `sentinel parallel-syncs ${MASTER_NAME} 2`,
            '',
          ].join('\n'),
        );
        sentinels.push(await spawnUntilReady(sentinelBinary()!, [conf], '+monitor master'));
        ports.push(port);
      }
      // Both replicas in sync, and every sentinel knowing both replicas and the other sentinels.
      await waitFor(async () => (await deployment.roles()).filter(r => r === 'slave').length === 2, {
        timeoutMs: 20_000,
        description: 'two replicas in sync',
      });
      await waitFor(
        async () => {
          for (const port of ports) {
            const [info] = await sentinelQuery(port, ['SENTINEL', 'MASTER', MASTER_NAME]);
            const fields = pairs(info as string[]);
            if (fields['num-slaves'] !== '2' || fields['num-other-sentinels'] !== '2') return false;
          }
          return true;
        },
        { timeoutMs: 30_000, description: 'the sentinels to see both replicas and each other' },
      );
      return deployment;
    } catch (error) {
      await deployment.dispose();
      throw error;
    }
  }

  url(credentials = ''): string {
    return `redis-sentinel://${credentials}${this.sentinelPorts.map(p => `127.0.0.1:${p}`).join(',')}/${MASTER_NAME}`;
  }

  /** The server the sentinels currently name as master. */
  async master(): Promise<RedisServer> {
    const [address] = await sentinelQuery(this.sentinelPorts[0]!, ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME]);
    const port = Number((address as string[])[1]);
    const server = this.servers.find(s => s.port === port);
    if (!server) throw new Error('the sentinels name a master that is not part of this deployment');
    return server;
  }

  /** Each live server's role (`master`/`slave`), via ROLE. */
  async roles(): Promise<string[]> {
    return Promise.all(
      this.servers
        .filter(s => s.pid !== undefined)
        .map(async s => {
          const client = new Redis(s.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
          try {
            await client.connect();
            const role = (await client.role()) as unknown[];
            if (role[0] === 'slave' && role[3] !== 'connected') return 'syncing';
            return String(role[0]);
          } catch {
            return 'down';
          } finally {
            client.disconnect();
          }
        }),
    );
  }

  async dispose(): Promise<void> {
    await Promise.all(this.sentinels.map(child => endProcess(child, 'SIGKILL')));
    await Promise.all(this.servers.map(s => s.dispose()));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** 3 masters and 3 replicas, joined by `redis-cli --cluster create`. */
export class ClusterDeployment {
  private constructor(readonly servers: RedisServer[]) {}

  static async start(): Promise<ClusterDeployment> {
    const servers: RedisServer[] = [];
    const deployment = new ClusterDeployment(servers);
    try {
      for (let i = 0; i < 6; i++) {
        servers.push(
          await RedisServer.start([
            ...QUICK_SYNC,
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            String(DOWN_AFTER_MS),
          ]),
        );
      }
      const created = spawnSync(
        'redis-cli',
        ['--cluster', 'create', ...servers.map(s => `127.0.0.1:${s.port}`), '--cluster-replicas', '1', '--cluster-yes'],
        { encoding: 'utf8', timeout: 60_000 },
      );
      if (created.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${created.stdout}\n${created.stderr}`);
      await waitFor(
        async () => {
          const states = await Promise.all(servers.map(s => clusterInfo(s.port)));
          return states.every(info => info.cluster_state === 'ok' && info.cluster_known_nodes === '6');
        },
        { timeoutMs: 30_000, description: 'every node to report cluster_state:ok with 6 nodes' },
      );
      // cluster_state:ok comes before the replicas' first sync: wait until every master has its replica online.
      await waitFor(async () => (await Promise.all(servers.map(s => onlineReplicas(s.port)))).filter(n => n >= 1).length === 3, {
        timeoutMs: 30_000,
        description: 'each of the 3 masters with its replica online',
      });
      return deployment;
    } catch (error) {
      await deployment.dispose();
      throw error;
    }
  }

  url(credentials = ''): string {
    return `redis-cluster://${credentials}${this.servers
      .slice(0, 3)
      .map(s => `127.0.0.1:${s.port}`)
      .join(',')}`;
  }

  /** The server that serves `slot` as master now. */
  async masterOfSlot(slot: number): Promise<RedisServer> {
    for (const server of this.servers) {
      if (server.pid === undefined) continue;
      const client = new Redis(server.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      try {
        await client.connect();
        const shards = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
        for (const [from, to, [, port]] of shards) {
          if (slot >= from && slot <= to) {
            const owner = this.servers.find(s => s.port === Number(port));
            if (owner) return owner;
          }
        }
      } catch {
        // This node is down or not answering: ask the next one.
      } finally {
        client.disconnect();
      }
    }
    throw new Error("no live node knows the slot's master");
  }

  async dispose(): Promise<void> {
    await Promise.all(this.servers.map(s => s.dispose()));
  }
}

/** The redis-sentinel executable, or undefined when Debian's redis-sentinel is not installed. */
export function sentinelBinary(): string | undefined {
  for (const candidate of ['redis-sentinel', '/usr/bin/redis-sentinel']) {
    if (spawnSync(candidate, ['--version'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  return undefined;
}

function redisCliAvailable(): boolean {
  return spawnSync('redis-cli', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** In `before`: skip loudly outside CI, fail in CI, when the packages the suite needs are missing. */
export function requireHaPackages(context: Mocha.Context, what: 'sentinel' | 'cluster'): void {
  const missing = [
    ...(RedisServer.binary() ? [] : ['redis-server']),
    ...(what === 'sentinel' && !sentinelBinary() ? ['redis-sentinel'] : []),
    ...(what === 'cluster' && !redisCliAvailable() ? ['redis-cli (package redis-tools)'] : []),
  ];
  if (missing.length === 0) return;
  if (inCi()) throw new Error(`${missing.join(', ')} not installed, and CI must run the Redis ${what} suite. Install the Debian packages.`);
  console.log(`\n  !!! SKIPPED: ${missing.join(', ')} not installed; the Redis ${what} tests did not run. !!!\n`);
  context.skip();
}

async function sentinelQuery(port: number, command: string[]): Promise<unknown[]> {
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await client.connect();
    return [await client.call(command[0]!, ...command.slice(1))];
  } finally {
    client.disconnect();
  }
}

async function clusterInfo(port: number): Promise<Record<string, string>> {
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await client.connect();
    const text = String(await client.call('CLUSTER', 'INFO'));
    return Object.fromEntries(
      text
        .split(/\r?\n/)
        .filter(l => l.includes(':'))
        .map(l => l.split(':', 2) as [string, string]),
    );
  } catch {
    return {};
  } finally {
    client.disconnect();
  }
}

/** A master's online replicas (0 for a replica or a node that does not answer). */
async function onlineReplicas(port: number): Promise<number> {
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await client.connect();
    return replicasFromInfo(await client.info('replication'));
  } catch {
    return 0;
  } finally {
    client.disconnect();
  }
}

function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}
