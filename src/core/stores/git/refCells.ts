import { randomInt } from 'node:crypto';
import { LockBackendError, LockConfigurationError } from '../../errors';
import type { CasCells } from '../casDriver';
import type { CasResult, VersionedRecord, Watch, WatchOptions } from '../store';
import {
  damaged,
  type GitRefs,
  isObjectName,
  lockRef,
  RECORD_FILE,
  refusedError,
  type FetchOutcome,
  type RefKind,
  type StoredValue,
} from './gitRefs';
import { commitSubject, lastAuditLine, stampEnv, stampOf, transitionSubject } from './recordCommit';
import type { RemotePoller } from './remotePoller';

/**
 * {@link CasCells} over refs of the git remote: a cell is one ref, its revision the commit SHA,
 * a write one new commit pushed against the expected SHA.
 *
 * Container records (`r<key>`) chain their commits — parent = the previous revision — so that the
 * ref's history is the audit trail; a record's commit takes its subject, author and date from the
 * record's new audit line (recordCommit.ts), as the server guard requires. Plain leases (`l<key>`) carry no audit, so each lease write is
 * a parentless commit: a lease ref's history is always one commit long and needs no compaction.
 */

/** Rounds of "another process of this clone is fetching the same ref" or "moved while read". */
const MAX_READ_ROUNDS = 20;

export class GitRefCells implements CasCells {
  /** The last revision this process saw per ref: the baseline of a new watch. */
  private readonly lastSeen = new Map<string, string | null>();
  /** Fetches running per ref, shared by concurrent reads of this process (see {@link fetchFresh}). */
  private readonly flights = new Map<string, Flight>();

  constructor(
    readonly refs: GitRefs,
    private readonly prefix: string,
    private readonly poller: RemotePoller,
  ) {}

  /** The remote ref of a cell: `r<digest>` (container record) or `l<digest>` (plain lease). */
  refOf(cell: string): string {
    const kind: RefKind | undefined = cell[0] === 'r' ? 'records' : cell[0] === 'l' ? 'leases' : undefined;
    const key = cell.slice(1);
    if (kind === undefined || !/^[0-9a-f]{64}$/.test(key)) {
      throw new LockConfigurationError('The git driver stores only keys that are SHA-256 hex digests (made by names.ts).', {
        setting: 'key',
      });
    }
    return lockRef(this.prefix, kind, key);
  }

  get(cell: string): Promise<VersionedRecord | null> {
    return this.readRef(this.refOf(cell));
  }

  /** Fetch (one round trip) and read the fetched commit from the clone (one local process). */
  async readRef(ref: string): Promise<VersionedRecord | null> {
    const stored = await this.readStored(ref);
    if (stored === null) return null;
    try {
      return { value: JSON.parse(stored.text), revision: stored.revision };
    } catch (cause) {
      throw damaged(`its ${RECORD_FILE} is not JSON`, cause);
    }
  }

  /**
   * The current commit of a ref and the text of its record, as stored. Always one fetch rather than
   * "ls-remote, then fetch when moved": the same two processes and one round trip when nothing
   * changed, and one round trip instead of two when it did — the read that follows a lost race
   * (see bench/gitStore.ts).
   */
  async readStored(ref: string): Promise<StoredValue | null> {
    for (let round = 0; round < MAX_READ_ROUNDS; round++) {
      const fetched = await this.fetchFresh(ref);
      if (fetched === 'absent') {
        this.seen(ref, null, false);
        return null;
      }
      if (fetched === 'busy') {
        await jitter();
        continue;
      }
      const stored = await this.refs.readTracking(ref);
      if (stored === 'missing' && this.refs.local) {
        this.seen(ref, null, false);
        return null;
      }
      if (stored === 'missing' || stored === 'moved') continue;
      this.seen(ref, stored.revision, false);
      return stored;
    }
    throw new LockBackendError(
      'git',
      'The lock ref kept changing while being read from this clone; try again. If no other git process runs in this clone, remove stale .lock files under .git/refs/lockstep-remotes/.',
    );
  }

  /**
   * A fetch of `ref` that starts after this call. Concurrent reads of one ref in this process share
   * it: while one fetch runs, every later read waits for the single fetch that starts after it, so
   * N readers cost at most two fetches in a row instead of N fetches racing for the tracking ref.
   */
  private fetchFresh(ref: string): Promise<FetchOutcome> {
    const flight = this.flights.get(ref);
    if (flight === undefined) return this.launch(ref);
    flight.next ??= flight.done.then(() => this.launch(ref));
    return flight.next;
  }

  private launch(ref: string): Promise<FetchOutcome> {
    const result = this.refs.fetch(ref);
    const flight: Flight = {
      done: result.then(
        () => undefined,
        () => undefined,
      ),
      next: undefined,
    };
    this.flights.set(ref, flight);
    void flight.done.then(() => {
      if (this.flights.get(ref) === flight) this.flights.delete(ref);
    });
    return result;
  }

  put(cell: string, expectedRevision: string | null, value: unknown, summary = 'lockstep: lease update'): Promise<CasResult> {
    const ref = this.refOf(cell);
    const line = cell[0] === 'r' ? lastAuditLine(value) : undefined;
    return this.write(
      ref,
      expectedRevision,
      [{ name: RECORD_FILE, content: JSON.stringify(value) }],
      line !== undefined ? transitionSubject(line) : summary,
      cell[0] === 'r',
      [],
      line !== undefined ? stampEnv(stampOf(line)) : undefined,
    );
  }

  /** A record written as a new history (no parent) over `expected`: an operator's adopt of a tampered page. */
  replace(cell: string, expectedRevision: string, value: unknown): Promise<CasResult> {
    const line = lastAuditLine(value);
    return this.write(
      this.refOf(cell),
      expectedRevision,
      [{ name: RECORD_FILE, content: JSON.stringify(value) }],
      line !== undefined ? transitionSubject(line) : 'lockstep: adopt',
      false,
      [],
      line !== undefined ? stampEnv(stampOf(line)) : undefined,
    );
  }

  /**
   * One write: a new commit (on top of `expected` when `chained`) pushed with `expected` as the
   * lease. `{ok:false}` when the remote ref is not at `expected` (any more). `stamp`: the author and
   * committer environment (recordCommit.ts); none: the clone's own identity.
   */
  async write(
    ref: string,
    expected: string | null,
    files: Parameters<GitRefs['writeCommit']>[0],
    summary: string,
    chained: boolean,
    trailers: readonly string[] = [],
    stamp?: Readonly<Record<string, string>>,
  ): Promise<CasResult> {
    if (expected !== null && !isObjectName(expected)) return { ok: false };
    const parent = chained ? expected : null;
    const message = commitSubject(summary);
    let commit = await this.refs.writeCommit(files, parent, message, trailers, stamp);
    if (commit === null) {
      // The base revision was never fetched into this clone: fetch it, unless the ref moved on.
      if ((await this.readRef(ref))?.revision !== expected) return { ok: false };
      commit = await this.refs.writeCommit(files, parent, message, trailers, stamp);
      if (commit === null) throw damaged('its commit could not be read after fetching it');
    }
    const pushed = await this.refs.push(commit, ref, expected);
    if (pushed.kind === 'pushed') {
      this.seen(ref, commit, true);
      return { ok: true, revision: commit };
    }
    if (pushed.kind === 'conflict') return { ok: false };
    // Refused for another reason: still a lost race if the ref has moved, else a real refusal.
    const current = (await this.refs.lsRemote([ref])).get(ref) ?? null;
    if (current !== expected) return { ok: false };
    throw refusedError(pushed.reason);
  }

  watch(cell: string, onChange: () => void, options: WatchOptions = {}): Watch {
    const ref = this.refOf(cell);
    return this.poller.watch(ref, onChange, this.lastSeen.get(ref), options.interest);
  }

  async close(): Promise<void> {
    this.poller.close();
  }

  /** What this process saw on the remote: a watch baseline, and news for watchers of that ref. */
  private seen(ref: string, revision: string | null, wrote: boolean): void {
    this.lastSeen.set(ref, revision);
    this.poller.observe(ref, revision, wrote);
  }
}

interface Flight {
  /** Settles when the running fetch ends, however it ends. */
  readonly done: Promise<void>;
  /** The fetch that starts after it, shared by the reads that arrived meanwhile. */
  next: Promise<FetchOutcome> | undefined;
}

/** 1–10 ms, so that two processes of one clone do not fetch the same ref in step again. */
function jitter(): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, randomInt(1, 11)));
}
