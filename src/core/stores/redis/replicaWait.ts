import { Cluster, type ChainableCommander } from 'ioredis';
import type { RedisClient } from './clients';
import type { ScriptClient } from './evalScript';

/** How many replicas must confirm a write, and for how long to wait for them. */
export interface ReplicaBound {
  readonly replicas: number;
  readonly timeoutMs: number;
}

/**
 * A {@link ScriptClient} for one operation that sends every script together with `WAIT replicas
 * timeout` in one pipeline: one round trip, and — since a pipeline goes over one connection to one
 * node, also on a Cluster — the `WAIT` counts the replicas that have this very write, never a write
 * on another node. After the script ran, `acknowledged` says how many replicas confirmed it.
 *
 * `WAIT` is not consensus: it says that the write reached that many replicas' memory, not that a
 * failover will pick one of them (README: "Redis beyond one server").
 */
export class ReplicaWaitingClient implements ScriptClient {
  /** Replicas that confirmed the last script's write; undefined before the first reply. */
  acknowledged: number | undefined;

  constructor(
    private readonly client: RedisClient,
    private readonly bound: ReplicaBound,
  ) {}

  evalsha(sha1: string, keyCount: number, ...args: (string | number)[]): Promise<unknown> {
    return this.withWait(pipeline => pipeline.evalsha(sha1, keyCount, ...args));
  }

  eval(source: string, keyCount: number, ...args: (string | number)[]): Promise<unknown> {
    return this.withWait(pipeline => pipeline.eval(source, keyCount, ...args));
  }

  private async withWait(script: (pipeline: ChainableCommander) => ChainableCommander): Promise<unknown> {
    for (let redirections = 0; ; redirections++) {
      const results = await script(this.client.pipeline()).wait(this.bound.replicas, this.bound.timeoutMs).exec();
      const [scripted, waited] = results ?? [];
      if (!scripted || !waited) throw Object.assign(new Error('Connection is closed.'), { code: 'ECONNCLOSED' });
      // ioredis follows a MOVED (or waits out a CLUSTERDOWN) for a pipeline only when every command in
      // it failed alike, and WAIT (no key) never fails so. Either reply means the script did not run:
      // learn the slots' owners again (a failover promoted a replica) and send it there.
      if (scripted[0] && notRunHere(scripted[0]) && this.client instanceof Cluster && redirections < MAX_REDIRECTIONS) {
        await refreshSlots(this.client);
        continue;
      }
      return this.reply(scripted, waited);
    }
  }

  private reply(scripted: [Error | null, unknown], waited: [Error | null, unknown]): unknown {
    if (scripted[0]) throw scripted[0];
    if (waited[0]) throw waited[0];
    this.acknowledged = Number(waited[1]);
    return scripted[1];
  }
}

const MAX_REDIRECTIONS = 3;

function notRunHere(error: Error): boolean {
  return /^(MOVED|CLUSTERDOWN|TRYAGAIN) /.test(error.message);
}

function refreshSlots(cluster: Cluster): Promise<void> {
  return new Promise(resolve => {
    cluster.refreshSlotsCache(() => resolve());
  });
}

/**
 * The `WAIT` timeout for a command timeout: three quarters of it, so that the reply (with the count)
 * arrives before the client gives up on the command.
 */
export function replicaWaitMs(commandTimeoutMs: number): number {
  return Math.max(1, Math.floor(commandTimeoutMs * 0.75));
}
