import type { Etcd3, IKeyValue, Watcher } from 'etcd3';
import { LockStorageError } from '../../errors';
import type { CasCells } from '../casDriver';
import { callSafely } from '../callSafely';
import { jsonText } from '../serializedJson';
import type { CasResult, VersionedRecord, Watch, WatchOptions } from '../store';
import type { EtcdFailures } from './etcdErrors';

/** Records are small; anything larger than this is refused rather than stored (etcd's own request limit is 1.5 MiB). */
const MAX_VALUE_BYTES = 1024 * 1024;

/**
 * Versioned cells in etcd: one key per cell, `<prefix>/<cell>` (the cell's name holds a digest made by core,
 * never a lock name), its JSON text as the value, and the key's `mod_revision` as the revision. A write is
 * one transaction: compare the key's `mod_revision` with the revision read (or its `create_revision` with 0
 * for a first write), then put. etcd commits a transaction through its Raft log, so an acknowledged write
 * is on a majority of members and survives the loss of the leader.
 *
 * A write is sent once (unsentRetry.ts): a failed comparison always means another writer moved the key, and
 * a write whose outcome is unknown (a lost connection, a timeout) fails with a typed error.
 */
export class EtcdCells implements CasCells {
  /** The last value this instance read or wrote per cell (CasDriver speculates on it; the comparison validates it). */
  private readonly seen = new Map<string, VersionedRecord>();
  private readonly watches = new Set<Watcher>();
  private closed = false;

  constructor(
    private readonly client: Etcd3,
    private readonly prefix: string,
    private readonly failures: EtcdFailures,
  ) {}

  private key(cell: string): string {
    return `${this.prefix}/${cell}`;
  }

  async get(cell: string): Promise<VersionedRecord | null> {
    const kv = await this.failures.run(async () => (await this.client.get(this.key(cell)).exec()).kvs[0]);
    if (kv === undefined) {
      this.seen.delete(cell);
      return null;
    }
    const record = { value: parseValue(kv), revision: kv.mod_revision };
    this.seen.set(cell, record);
    return record;
  }

  peek(cell: string): VersionedRecord | undefined {
    return this.seen.get(cell);
  }

  async put(cell: string, expectedRevision: string | null, value: unknown): Promise<CasResult> {
    const text = jsonText(value);
    if (text === undefined || Buffer.byteLength(text) > MAX_VALUE_BYTES) {
      throw new LockStorageError(
        'etcd',
        `A record must be JSON of at most ${MAX_VALUE_BYTES} bytes; this write was refused and nothing was stored.`,
      );
    }
    if (expectedRevision !== null && !/^[1-9]\d*$/.test(expectedRevision)) return { ok: false };
    const key = this.key(cell);
    const reply = await this.failures.run(() =>
      (expectedRevision === null ? this.client.if(key, 'Create', '==', 0) : this.client.if(key, 'Mod', '==', expectedRevision))
        .then(this.client.put(key).value(text))
        .commit(),
    );
    if (!reply.succeeded) return { ok: false };
    const revision = reply.header.revision;
    this.seen.set(cell, { value: JSON.parse(text), revision });
    return { ok: true, revision };
  }

  /**
   * Calls `onChange` once the watch is in place, after every put or delete of the cell's key, and after the
   * watch reconnects (changes made while it was away are not replayed one by one: the listener re-reads).
   * Its health (`live`, and `onHealth` before the `onChange` that follows each change of it): up once etcd
   * created the watch and after each reconnection, down while the client has lost it (it reconnects by
   * itself); a watch etcd never created stays down for good, and its owner starts another.
   */
  watch(cell: string, onChange: () => void, options?: WatchOptions): Watch {
    let healthy = false;
    let recovers = true;
    const live = { via: 'etcd watch' as const };
    if (this.closed) return { dispose: () => undefined, live: { ...live, healthy, recovers: false } };
    let active = true;
    let watcher: Watcher | undefined;
    const call = (): void => {
      if (active) callSafely(onChange);
    };
    const health = (now: boolean): void => {
      if (!active || healthy === now) return;
      healthy = now;
      callSafely(() => options?.onHealth?.(now));
    };
    this.client
      .watch()
      .key(this.key(cell))
      .create()
      .then(
        created => {
          if (!active) {
            created.cancel().catch(() => undefined);
            return;
          }
          watcher = created;
          this.watches.add(created);
          created.on('put', call);
          created.on('delete', call);
          created.on('connected', () => {
            health(true);
            call();
          });
          // The client keeps trying to watch again; until it has, a change may go unheard.
          created.on('disconnected', () => {
            health(false);
            call();
          });
          created.on('error', () => {
            health(false);
            call();
          });
          health(true);
          call();
        },
        () => {
          recovers = false;
          health(false);
          call();
        },
      );
    return {
      dispose: () => {
        if (!active) return;
        active = false;
        if (watcher) {
          this.watches.delete(watcher);
          watcher.cancel().catch(() => undefined);
        }
      },
      get live() {
        return { ...live, healthy, recovers };
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const watcher of this.watches) await watcher.cancel().catch(() => undefined);
    this.watches.clear();
    this.client.close();
  }
}

function parseValue(kv: IKeyValue): unknown {
  try {
    return JSON.parse(kv.value.toString());
  } catch {
    throw new LockStorageError(
      'etcd',
      'A value stored in etcd under this prefix is not Lockstep JSON, so it cannot be read. Stop the processes using this prefix and remove its keys (etcdctl del --prefix PREFIX/), or restore etcd from a snapshot.',
    );
  }
}
