import * as path from 'node:path';
import type { ResolvedConfig } from '../../config';
import { LockConfigurationError } from '../../errors';
import { CasDriver } from '../casDriver';
import type { CasMeta, CasResult, ClaimResult, Driver, ReleaseResult, VersionedRecord, Watch, WatchOptions } from '../store';
import { AuditHistory, type AuditEntry, type CompactResult } from './auditHistory';
import { GitRunner } from '../../git/runner';
import { GitRefs } from './gitRefs';
import { GitRefCells } from './refCells';
import { RemotePoller } from './remotePoller';
import type { Clock } from '../../clock';
import { fixedPace, GIT_POLL_PACE, type PollPace } from '../pollPace';
import { verifyHistory, type SigningPolicy } from './verifiedHistory';

/**
 * The `git` driver: the shared git remote is the lock store, so a team needs no server to run.
 * Every key is one ref under `refs/lockstep/` on the remote (see gitRefs.ts), every write one new
 * commit pushed with the revision it was computed from as the expected old value — git refuses it
 * atomically when someone else moved the ref first. A read is one fetch of that ref. Plain leases
 * are the same compare-and-swap, through {@link CasDriver}. Retrying a lost race is the caller's
 * job (the container service); this driver reports `{ok:false}` and never loops on the network.
 */

export interface GitDriverOptions {
  /** One fixed interval for `watch`'s `git ls-remote` polls (tests), instead of the adaptive pace. */
  readonly pollIntervalMs?: number;
  /** The adaptive pace of `watch` (pollPace.ts). Default GIT_POLL_PACE: 30–36 s idle, 2 s while holding or waiting. */
  readonly pollPace?: PollPace;
  /** The poller's clock and timers (tests simulate hours with a ManualClock). */
  readonly pollClock?: Clock;
  /** The poller's jitter source, in [0, 1). Default Math.random. */
  readonly pollRandom?: () => number;
  /** Called once per git process spawned, with its subcommand (benchmark, tests). */
  readonly onGitSpawn?: (subcommand: string) => void;
}

export class GitDriver implements Driver {
  readonly name = 'git';
  readonly distributed = true;
  private readonly leases: CasDriver;
  private closed = false;

  /** @internal use {@link createGitDriver} */
  constructor(
    private readonly cells: GitRefCells,
    private readonly history: AuditHistory,
  ) {
    this.leases = new CasDriver('git', true, cells);
  }

  claim(key: string, ownerHash: string, ttlMs: number, now: number): Promise<ClaimResult> {
    return this.leases.claim(key, ownerHash, ttlMs, now);
  }

  extend(key: string, ownerHash: string, ttlMs: number, now: number): Promise<boolean> {
    return this.leases.extend(key, ownerHash, ttlMs, now);
  }

  release(key: string, ownerHash: string, now: number): Promise<ReleaseResult> {
    return this.leases.release(key, ownerHash, now);
  }

  read(key: string): Promise<VersionedRecord | null> {
    return this.cells.get(recordCell(key));
  }

  /** The commit message is `meta.summary`: the ref's history is the record's audit trail. */
  compareAndSwap(key: string, expectedRevision: string | null, next: unknown, meta: CasMeta): Promise<CasResult> {
    return this.cells.put(recordCell(key), expectedRevision, next, meta.summary);
  }

  /** Polls the remote (remotePoller.ts) at the pace `options.interest` asks for: fast while this window holds or waits. */
  watch(key: string, onChange: () => void, options?: WatchOptions): Watch {
    if (this.closed) return { dispose: () => undefined };
    return this.cells.watch(recordCell(key), onChange, options);
  }

  /**
   * Proves the record's history up to `revision` (a signed page: verifiedHistory.ts); throws
   * LockTamperedPageError naming the first step that is not proven.
   */
  verifyHistory(revision: string, policy: SigningPolicy): Promise<void> {
    return verifyHistory(this.cells.refs, revision, policy);
  }

  /**
   * Replaces a record whose history is not proven by a new one (an operator's signed adopt): a
   * parentless commit pushed against the current revision. `{ok:false}` when it moved meanwhile.
   */
  replaceRecord(key: string, expectedRevision: string, next: unknown): Promise<CasResult> {
    return this.cells.replace(recordCell(key), expectedRevision, next);
  }

  /** The record's audit trail (for `lockstep audit`): the newest `limit` writes, newest first, from the current revision or `revision`. */
  readHistory(key: string, limit = 100, revision?: string): Promise<AuditEntry[]> {
    return this.history.read(this.cells.refOf(recordCell(key)), limit, revision);
  }

  /**
   * Bounds the record's history: squashes it into one snapshot commit that keeps the current value
   * and the newest audit lines (see auditHistory.ts). `{ok:false}` when the record moved meanwhile
   * (or is not at `expected`).
   */
  compact(key: string, expected?: string): Promise<CompactResult> {
    return this.history.compact(this.cells.refOf(recordCell(key)), expected);
  }

  /** Whether `revision` (a write this process made or read: its commits are in the clone) has `writes` commits on its first. */
  historyReaches(revision: string, writes: number): Promise<boolean> {
    return this.history.reaches(revision, writes);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.cells.close();
  }
}

function recordCell(key: string): string {
  return `r${key}`;
}

/** Opens the `git` driver. Runs nothing until the first operation. */
export function createGitDriver(
  config: Pick<ResolvedConfig, 'gitDir' | 'gitRemote' | 'prefix' | 'gitTimeoutMs'> & {
    readonly gitSigning?: ResolvedConfig['gitSigning'];
    readonly gitOpenpgp?: boolean;
  },
  options: GitDriverOptions = {},
): GitDriver {
  if (config.gitDir === undefined || config.gitDir === '' || !path.isAbsolute(config.gitDir)) {
    throw new LockConfigurationError('The git driver needs gitDir: the absolute path of a local clone whose remote holds the lock refs.', {
      setting: 'gitDir',
    });
  }
  if (config.gitRemote === '' || config.gitRemote.startsWith('-')) {
    throw new LockConfigurationError('gitRemote must be a remote name of the clone, a path or a URL.', { setting: 'gitRemote' });
  }
  const pace = options.pollIntervalMs !== undefined ? fixedPace(options.pollIntervalMs) : (options.pollPace ?? GIT_POLL_PACE);
  for (const ms of [pace.fast.minMs, pace.fast.maxMs, pace.slow.minMs, pace.slow.maxMs]) {
    if (!Number.isFinite(ms) || ms <= 0) {
      throw new LockConfigurationError('The git poll interval must be a positive number of milliseconds.', { setting: 'pollIntervalMs' });
    }
  }
  const runner = new GitRunner({ gitDir: config.gitDir, timeoutMs: config.gitTimeoutMs, onSpawn: options.onGitSpawn });
  const refs = new GitRefs(runner, config.gitRemote, config.gitSigning ?? 'auto', config.gitOpenpgp === true);
  const poller = new RemotePoller(heads => refs.lsRemote(heads), pace, options.pollClock, options.pollRandom);
  const cells = new GitRefCells(refs, config.prefix, poller);
  return new GitDriver(cells, new AuditHistory(cells, refs, true));
}
