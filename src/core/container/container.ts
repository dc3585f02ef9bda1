import { SECOND, systemClock, type Clock } from '../clock';
import type { LockManagerOptions, ResolvedConfig } from '../config';
import { MAX_RETRY_SLEEP_MS } from '../bounds';
import { openDriver } from '../drivers';
import {
  describePage,
  LockBackendError,
  LockBusyError,
  LockError,
  LockConfigurationError,
  LockLeaseLostError,
  LockNoPageError,
  LockRefusedError,
  LockRegrantedPageError,
  LockWriteDeclinedError,
  LockTamperedPageError,
  type PageLocation,
} from '../errors';
import * as path from 'node:path';
import * as protocol from '../lockRecord';
import type { ContainerSettings, HolderProof, IdSpan, Landing, LockRecord, Outcome } from '../lockRecord';
import { describe, type LockStatus } from '../lockStatus';
import { parseRecord } from '../recordCodec';
import type { DeploymentInfo, Driver, HistoryEntry, VersionedRecord, Watch, WatchOptions } from '../stores/store';
import { gitIn, type GitCommand } from '../git/runner';
import { GitError } from '../git/gitError';
import { hashToken, newOwnerToken } from '../tokens';
import {
  containerFileOnRemote,
  hasPushProof,
  includePushConfig,
  openClone,
  remoteBranchTip,
  removePushProof,
  resolveIdentity,
  type Clone,
} from './clone';
import { CONTAINER_DEFAULTS, CONTAINER_FILE, containerSettings, readContainerFile, type ContainerFile } from './containerFile';
import { checkLanded, hasUnpushedWork, landingAnnounced } from './landingChecks';
import { pageLocation } from './pageLocation';
import { committedPage, containerConfig, containerKey, type Env } from './pageSettings';
import { SessionChoreography } from './sessionChoreography';
import { allowedSignersText, openpgpListingReader, signedPageDriver, signingPolicy } from './signedPage';
import { ChangeWaiter, WAITING } from './turnWait';
import { readCloneSettings, type SettingEntry } from '../git/cloneSettings';
import { resolveSharedRemote } from './sharedRemote';
import { type Session, sessionDir } from './session';
import { GrantWatermark } from './grantWatermark';
import { MAX_CAS_ATTEMPTS, swap, type RecordAtRevision, type SwapOptions } from './swapService';
import { AUDIT_LOG_KEEP, AUTO_COMPACT_AFTER } from '../stores/gitPageLayout';
import { COMPACTION_RETRY_WRITES, CompactionBackoff } from './compactionBackoff';

export interface OpenContainerOptions {
  readonly cwd: string;
  readonly env?: Env;
  readonly clock?: Clock;
  /** Settings from a layer between the environment and `.lockstep.json` (VS Code's `lockstep.*`). */
  readonly overrides?: { readonly identity?: string; readonly driver?: LockManagerOptions };
  /** An already open driver (tests, the extension's shared connection). Not closed by `close()`. */
  readonly driverInstance?: Driver;
  /** A git runner in `cwd` the caller already has (the pre-push guard's): the identity and the clone are asked through it. */
  readonly git?: GitCommand;
  /** The clone's settings as the caller already reads them with {@link readCloneSettings} (the pre-push guard's): not read again. */
  readonly settings?: Promise<readonly SettingEntry[]>;
  /** Where a note for the person goes (the CLI's stderr, the extension's output channel): an automatic compaction the remote refused. */
  readonly onNotice?: (message: string) => void;
}

/**
 * Tests only: the number of writes after which the git driver's history compacts by itself, instead of
 * {@link AUTO_COMPACT_AFTER} (a test cannot make a hundred writes per case). Read by no other part.
 */
export const TEST_COMPACT_AFTER_ENV = 'LOCKSTEP_TEST_COMPACT_AFTER';

/** The lease holder's own transitions: after a lost race they retry at once while a burst of others backs off (casBackoff.ts). */
const HOLDER = { precedence: 'holder' } as const;

/** What a change whose write was sent but not answered says (an acquire and a release say their own). */
const UNKNOWN_OUTCOME =
  'Whether this change reached the lock page is not known yet: `lockstep status` and `lockstep audit` show the page as it is; look there before running it again.';

/**
 * The clone's `.lockstep.json`. A clone whose remote-tracking default branch already has the file
 * (a teammate initialised and pushed; this clone fetched but has not pulled) is told to pull, not to
 * run `init`. Asks no remote: only what the clone has fetched.
 */
async function readCommittedFile(clone: Clone): Promise<ContainerFile> {
  try {
    return readContainerFile(clone.root);
  } catch (error) {
    if (!(error instanceof LockRefusedError && error.reason === 'not-initialised')) throw error;
    const branch = await containerFileOnRemote(clone, CONTAINER_DEFAULTS.remote, CONTAINER_FILE, { fetch: false }).catch(() => undefined);
    if (branch === undefined) throw error;
    // The branch itself may have it here already: then the work tree is a checkout of another branch, from before the container.
    const local = await clone.git
      .raw(['cat-file', '-e', '--end-of-options', `refs/heads/${branch}:${CONTAINER_FILE}`])
      .then(() => true)
      .catch(() => false);
    throw new LockRefusedError(
      'not-initialised',
      local
        ? `The checked-out branch has no ${CONTAINER_FILE}, but ${branch} has it (this repository is a container): check out ${branch},` +
            ' or a branch made from it, and run the command again; do not run lockstep init.'
        : `This clone has not pulled ${CONTAINER_FILE} yet: ${CONTAINER_DEFAULTS.remote}/${branch} has it (a teammate made this repository a container).` +
            ' Pull it (`git pull`) and run the command again; do not run lockstep init.',
      { cause: error },
    );
  }
}

/**
 * One container as seen from one clone: the facade the command line and the extension call. It reads
 * the page (proving a signed one), writes it through the compare-and-swap service (`swapService.ts`)
 * and keeps the clone's session and push proof in step with it (`sessionChoreography.ts`). Every rule
 * lives in `lockRecord.ts`; this class only does I/O around it.
 */
export class Container {
  private driverPromise: Promise<Driver> | undefined;
  /** The clone's session kept in step with the page: settled at every read, promoted by an acquire. */
  private readonly sessions: SessionChoreography;
  /** The highest grant this clone has read on the page (grantWatermark.ts). */
  private readonly watermark: GrantWatermark;
  /** The automatic compactions started by this container's writes, one after another; awaited by close(). */
  private compacting: Promise<void> = Promise.resolve();

  private constructor(
    readonly clone: Clone,
    readonly file: ContainerFile,
    readonly settings: ContainerSettings & { readonly heartbeatMs: number },
    readonly identity: string,
    readonly config: ResolvedConfig,
    private readonly clock: Clock,
    private readonly injected: Driver | undefined,
    private readonly compactAfter: number,
    private readonly onNotice: ((message: string) => void) | undefined,
  ) {
    this.sessions = new SessionChoreography(clone, file, settings, identity, clock, describePage(pageLocation(config, file.container)));
    this.watermark = new GrantWatermark(path.join(sessionDir(clone.gitDir), `grant-${this.key.slice(0, 32)}`));
  }

  static async open(options: OpenContainerOptions): Promise<Container> {
    const env = options.env ?? process.env;
    // The clone's settings (identity, remote URLs: one `git config` run) are read beside the clone's `git rev-parse`
    // (the same repository from cwd); a missing identity counts only after the clone and its .lockstep.json were found.
    const git = options.git ?? gitIn(options.cwd);
    const settings = options.settings ?? readCloneSettings(git);
    const identityLookup = resolveIdentity({ git }, env, options.overrides?.identity, settings);
    identityLookup.catch(() => undefined);
    const opened = await openClone(options.cwd, git);
    const file = await readCommittedFile(opened);
    // The committed remote names are names of this clone's own remotes, never a path in the work tree, a command or an
    // option: checked before any git talks to a remote, and every later git of the clone may use only their transports.
    const read = await settings;
    const shared = await Promise.all([
      resolveSharedRemote(opened.git, opened.root, file.remote, 'remote', read),
      ...(file.driver === 'git' && (file.gitRemote ?? file.remote) !== file.remote
        ? [resolveSharedRemote(opened.git, opened.root, file.gitRemote ?? '', 'gitRemote', read)]
        : []),
    ]);
    const clone: Clone = { ...opened, git: gitIn(opened.root, { protocols: [...new Set(shared.flatMap(s => s.protocols))] }) };
    const identity = await identityLookup;
    const config = containerConfig(file, clone.root, env, options.overrides?.driver);
    const testBound = Number(env[TEST_COMPACT_AFTER_ENV]);
    return new Container(
      clone,
      file,
      containerSettings(file),
      identity,
      config,
      options.clock ?? systemClock,
      options.driverInstance,
      Number.isSafeInteger(testBound) && testBound > 0 ? testBound : AUTO_COMPACT_AFTER,
      options.onNotice,
    );
  }

  /** The record's key in the store: a digest, never the container's id in clear. */
  get key(): string {
    return containerKey(this.config.prefix, this.file.container);
  }

  session(): Session | undefined {
    return this.sessions.session();
  }

  /** Whether the clone's push proof file is there now (what git reads into a push's options when it starts). */
  hasPushProof(): boolean {
    return hasPushProof(this.clone);
  }

  /** The grant of this clone's release whose lost answer this command's read of the page found landed, and finished. */
  get finishedRelease(): number | undefined {
    return this.sessions.finishedRelease;
  }

  /** An acquire of this clone whose outcome is not known yet (after a read of the page settled what it could). */
  pendingAcquire(): Pick<Session, 'grant'> | undefined {
    const pending = this.sessions.pending();
    return pending ? { grant: pending.grant } : undefined;
  }

  /** The page as stored. Throws {@link LockNoPageError} when the store holds none: never read as free. */
  async read(): Promise<RecordAtRevision> {
    const driver = await this.driver();
    let stored = await driver.read(this.key);
    if (stored === null) throw new LockNoPageError(await this.page(), committedPage(this.file, this.clone.root));
    if (this.file.allowedSigners !== undefined) stored = await this.proven(driver, stored);
    const record = parseRecord(stored.value, driver.name, this.file.container, this.settings);
    // A page below a grant this clone has seen was set back: never read as free, never a grant issued twice.
    const session = this.session();
    this.watermark.check(driver.name, stored.revision, record.grant, session?.grant);
    // Nor one that gives this clone's own grant to another token.
    const h = record.holder;
    if (session !== undefined && h !== null && h.grant === session.grant && h.tokenHash !== hashToken(session.token))
      throw new LockRegrantedPageError(driver.name, stored.revision, session.grant);
    await this.sessions.settle(record);
    return { record, revision: stored.revision };
  }

  /** The highest grant this clone has seen on the page: read there, or its own session's (grantWatermark.ts). */
  highestGrantSeen(): number {
    return this.watermark.seen(this.session()?.grant);
  }

  /**
   * A signed page's value once its history is proven (signedPage.ts, verifiedHistory.ts). A step that
   * is not is judged once more on fresh evidence before the page reads tampered: the ref read again
   * (another process of this clone may have verified a later step meanwhile) and the allowed signers
   * fetched again (a teammate's key may have landed since this clone last fetched).
   */
  private async proven(driver: Driver, stored: VersionedRecord): Promise<VersionedRecord> {
    const signed = signedPageDriver(driver);
    const file = this.file as ContainerFile & { allowedSigners: string };
    try {
      await signed.verifyHistory(stored.revision, signingPolicy(this.clone, file, this.settings, this.key));
      return stored;
    } catch (error) {
      if (!(error instanceof LockTamperedPageError)) throw error;
      const again = await driver.read(this.key);
      if (again === null) throw new LockNoPageError(await this.page(), committedPage(this.file, this.clone.root));
      const policy = signingPolicy(this.clone, file, this.settings, this.key);
      const openpgp = openpgpListingReader(this.clone, file, { fetch: true });
      await signed.verifyHistory(again.revision, {
        ...policy,
        allowedSigners: () => allowedSignersText(this.clone, file, { fetch: true }),
        ...(openpgp !== undefined ? { openpgp } : {}),
      });
      return again;
    }
  }

  /** Which page this container reads: driver (as opened, so what `auto` chose), location, prefix, container. */
  async page(): Promise<PageLocation> {
    const driver = await this.driver();
    return pageLocation(this.config, this.file.container, driver.name);
  }

  /** The store's deployment (Redis: one server, Sentinel or Cluster, and the replicas seen); null for drivers without replicas. */
  async deployment(): Promise<DeploymentInfo | null> {
    const driver = await this.driver();
    return driver.describeDeployment ? driver.describeDeployment() : null;
  }

  /**
   * Creates the container's page (`lockstep init`), or with `adopt` recreates a lost one. Only where
   * the store holds no page: an existing page is never overwritten.
   */
  async createPage(adopt?: { reason: string; grantFloor: number; nextIdFloor: number }): Promise<{ grant: number; nextId: number }> {
    const driver = await this.driver();
    const now = this.clock.now();
    const outcome = adopt
      ? protocol.adoptPage(this.file.container, this.settings, { identity: this.identity, ...adopt }, now)
      : protocol.createPage(this.file.container, { identity: this.identity }, now);
    if (!outcome.ok) throw outcome.error;
    // The SQL driver's table is created with the page, so that a new team needs no separate step.
    const migratable = driver as Driver & { migrate?: () => Promise<void> };
    if (typeof migratable.migrate === 'function') await migratable.migrate();
    const written =
      adopt && this.file.allowedSigners !== undefined
        ? ((await this.adoptOverTampered(driver, outcome.record)) ??
          (await driver.compareAndSwap(this.key, null, outcome.record, { summary: outcome.summary })))
        : await driver.compareAndSwap(this.key, null, outcome.record, { summary: outcome.summary });
    if (!written.ok) {
      // A damaged page says so (its own error names the repair) rather than reading as one that is merely there.
      await driver.read(this.key);
      throw new LockConfigurationError(
        `This store (${describePage(await this.page())}) already holds the lock page of container ${this.file.container.slice(0, 8)}…; it is never overwritten. \`lockstep status\` shows it.`,
        { setting: 'container' },
      );
    }
    return { grant: outcome.record.grant, nextId: outcome.record.nextId };
  }

  /**
   * On a signed page, an operator's adopt also repairs a tampered page: its signed, parentless commit
   * replaces the history whose step is not proven, and the verified chain restarts there. A page that
   * reads proven is never replaced. Undefined when the store holds no page (then adopt creates one).
   */
  private async adoptOverTampered(driver: Driver, record: LockRecord): Promise<{ ok: boolean } | undefined> {
    const stored = await driver.read(this.key);
    if (stored === null) return undefined;
    try {
      await this.proven(driver, stored);
      return { ok: false };
    } catch (error) {
      if (!(error instanceof LockTamperedPageError)) throw error;
      // The tip as it reads now: a tampered history stays tampered whatever is added on top of it.
      const current = await driver.read(this.key);
      return current === null ? undefined : signedPageDriver(driver).replaceRecord(this.key, current.revision, record);
    }
  }

  async status(): Promise<LockStatus> {
    const { record } = await this.read();
    return this.describe(record);
  }

  describe(record: LockRecord): LockStatus {
    const session = this.session();
    return describe(
      record,
      this.settings,
      {
        identity: this.identity,
        ...(session ? { session: { grant: session.grant, tokenHash: hashToken(session.token) } } : {}),
      },
      this.clock.now(),
    );
  }

  /**
   * Acquires the container lock. The new owner token is written to `pending.json` before the record,
   * so a write whose outcome is unknown (a timeout, a kill, a dropped connection) never leaves a grant
   * whose token is lost: the next command in this clone finishes or drops it ({@link settle}), and an
   * acquire again reuses that token, so its first write and its retry can never be two holders.
   */
  async acquire(
    options: { wait?: number; ttl?: number; signal?: AbortSignal } = {},
  ): Promise<{ grant: number; expiresAt: number; already?: boolean }> {
    // A wait wakes on the driver's announcement of a change, with its poll as the backup (turnWait.ts).
    const waiter = new ChangeWaiter(onChange => this.watch(onChange, { interest: () => WAITING }), this.clock);
    try {
      return await this.acquireWaiting(options, waiter);
    } finally {
      waiter.dispose();
    }
  }

  private async acquireWaiting(
    options: { wait?: number; ttl?: number; signal?: AbortSignal },
    waiter: ChangeWaiter,
  ): Promise<{ grant: number; expiresAt: number; already?: boolean }> {
    const branch = this.file.protectedBranches[0] ?? 'main';
    // Where the protected branch was when the grant began, asked beside the page's read: a release names as
    // landed only a commit that was not there yet (see checkLanded).
    const base = remoteBranchTip(this.clone, this.file.remote, branch, this.config.gitTimeoutMs);
    base.catch(() => undefined);
    // Acquiring again in the clone that holds the lock changes nothing: say so, and keep the lease.
    const { record: first } = await this.read();
    const held = this.sessions.sessionProof();
    if (held && protocol.holds(first, held.tokenHash, held.grant, this.clock.now())) {
      return { grant: held.grant, expiresAt: (first.holder as protocol.Holder).expiresAt, already: true };
    }
    const unsettled = this.sessions.pending();
    const deadline = this.clock.monotonic() + (options.wait ?? 0) * SECOND;
    const pending = this.sessions.beginAcquire(unsettled?.token ?? newOwnerToken(), await base.catch(() => undefined));
    if (this.file.serverGuard) await includePushConfig(this.clone);
    const ttl = options.ttl !== undefined ? { ttlMs: options.ttl * SECOND } : {};
    for (;;) {
      let result: { grant: number; expiresAt: number };
      try {
        // The transition stays pure; the pending file is written by the swap right before its write leaves.
        result = await this.apply(
          record =>
            protocol.acquire(
              record,
              this.settings,
              { identity: this.identity, tokenHash: pending.tokenHash, proofHash: pending.proofHash(protocol.nextGrant(record)), ...ttl },
              this.clock.now(),
            ),
          {
            beforeWrite: granted => pending.ask(granted.grant),
            unknownOutcome:
              'Whether the lock was granted is not known yet: `lockstep status` (or `lockstep acquire`) in this clone finds out from the page and finishes it.',
          },
        );
      } catch (error) {
        // The write may have reached the store: the token stays in pending.json for the next command to settle.
        if (!(error instanceof LockRefusedError)) throw error;
        // The reused token's earlier write landed meanwhile: the read before this attempt finished it, and the
        // refusal ("you already hold it") is this clone's own grant. That is this acquire's success.
        if (error.reason === 'already-holder' && unsettled !== undefined) {
          const { record } = await this.read();
          const mine = this.sessions.sessionProof();
          if (mine && mine.tokenHash === pending.tokenHash && protocol.holds(record, mine.tokenHash, mine.grant, this.clock.now())) {
            return { grant: mine.grant, expiresAt: (record.holder as protocol.Holder).expiresAt };
          }
        }
        // A refusal follows only answers the store gave: every write of this call was refused, none is in flight.
        if (pending.sent && unsettled === undefined) pending.drop();
        const busy = error.reason === 'held-by-other' || error.reason === 'not-your-turn';
        if (!busy) throw error;
        const remaining = deadline - this.clock.monotonic();
        if (remaining <= 0 || options.signal?.aborted) {
          throw new LockBusyError(error.message, options.wait ?? 0, { cause: error });
        }
        // Until the page changes (the driver's watch), polled gently as the backup rather than every 25 ms.
        await waiter.sleep(Math.min(remaining, 40 * MAX_RETRY_SLEEP_MS), options.signal);
        continue;
      }
      // The grant is the swap's answer; the pending file named it before the write left.
      const granted = pending.session(result.grant);
      await this.sessions.promote(granted, granted);
      return result;
    }
  }

  async heartbeat(): Promise<{ expiresAt: number; grant: number }> {
    const proof = await this.holderProof();
    try {
      const { expiresAt } = await this.apply(record => protocol.heartbeat(record, this.settings, proof, this.clock.now()), HOLDER);
      return { expiresAt, grant: proof.grant };
    } catch (error) {
      // A lost lease is never revived: the push proof goes; the session stays so that status says "stale".
      if (error instanceof LockLeaseLostError) removePushProof(this.clone);
      throw error;
    }
  }

  /**
   * Valid only after the clone's work has pushed (docs/protocol.md#transitions). `landed` names the
   * commit that landed under this grant, or null when nothing did (the page then says so).
   * `justPushed`: this process has just pushed the protected branch and git updated its remote-tracking
   * ref as the push landed, so the landing is judged by that ref without asking the remote again (VS
   * Code's Push and Release, whose push may have needed credentials only VS Code's askpass has).
   */
  async release(
    options: { justPushed?: boolean } = {},
  ): Promise<{ grant: number; reclaimed: number; landed: string | null; already?: boolean }> {
    // Whether the work landed (a fetch and a few git queries) is asked while the page is read, not after.
    const session = this.session();
    const landing = this.checkLanded(session, { fetch: options.justPushed !== true });
    landing.catch(() => undefined); // judged below, after the lease; never an unhandled rejection
    // A clone that does not hold the live grant is told that first: pushing would not help it.
    const { record } = await this.read();
    // An earlier release whose answer was lost did land: it is finished now (or was, by a command since), and said so.
    const finished = this.session() === undefined ? (this.sessions.finishedRelease ?? this.sessions.releasedEarlier(record)) : undefined;
    if (finished !== undefined) {
      const recorded = protocol.releaseRecorded(record, finished);
      return { grant: finished, reclaimed: recorded?.reclaimed ?? 0, landed: recorded?.landed ?? null, already: true };
    }
    const proof = await this.holderProof();
    const lost = protocol.release(record, proof, this.clock.now(), { settings: this.settings });
    if (!lost.ok && lost.error instanceof LockLeaseLostError) throw lost.error;
    const landed = await landing;
    const result = await this.apply(
      r => protocol.release(r, proof, this.clock.now(), { settings: this.settings, ...(landed ? { landed } : {}) }),
      {
        ...HOLDER,
        unknownOutcome:
          'Whether the release reached the page is not known yet: `lockstep release` again in this clone finds out and finishes it (it answers that it already landed if it did).',
      },
    );
    this.sessions.end();
    return { ...result, landed: landed ?? null };
  }

  /**
   * Drops this clone's session and push proof on purpose (`lockstep forget`): for a lapsed lease
   * whose work will not be pushed. Refused while the session is the live holder (release that).
   */
  async forget(): Promise<{ grant: number | null }> {
    const proof = this.sessions.sessionProof();
    if (proof) {
      // Only a session the page shows is not live may go: an unreadable page refuses (the token would be lost).
      const { record } = await this.read();
      if (protocol.holds(record, proof.tokenHash, proof.grant, this.clock.now())) {
        throw new LockRefusedError(
          'already-holder',
          `This clone holds the live lease (grant #${proof.grant}): push your work and release it (lockstep release --push) rather than forget it.`,
        );
      }
    }
    this.sessions.end();
    return { grant: proof?.grant ?? null };
  }

  /**
   * Whether this clone's work is not all on the remote's protected branch, as far as the last fetch
   * knows (no fetch: status stays read-only); undefined when that cannot be told.
   */
  async hasUnpushedWork(): Promise<boolean | undefined> {
    return hasUnpushedWork(this.clone, this.file);
  }

  /** A guard refused a protected push from this clone: audit it on the page (best effort, folded when repeated). */
  /** `seen`: the page as this command just read it (the guard's), the swap's first attempt instead of a second read. */
  async auditRefusedPush(detail: string, seen?: RecordAtRevision): Promise<void> {
    const grant = this.session()?.grant ?? 0;
    await this.apply(record => protocol.auditRefusedPush(record, { identity: this.identity, grant, detail }, this.clock.now()), {
      ...(seen ? { first: seen } : {}),
    }).catch(() => undefined);
  }

  /**
   * What stops a release: uncommitted tracked changes or commits the remote lacks (throws 'not-landed').
   * Returns the commit that landed under the session's grant: HEAD, when it is on the remote's branch,
   * was not there when the grant began, and was committed by this person or during the grant; undefined
   * when nothing of this grant landed (docs/protocol.md#landings-and-caution).
   */
  checkLanded(session: Session | undefined = this.session(), options: { fetch?: boolean } = {}): Promise<string | undefined> {
    return checkLanded(this.clone, this.file, this.identity, session, options);
  }

  /**
   * Whether this clone's pushes to a protected branch are announced on the page first: where no server
   * guard runs (`serverGuard` off), the announcement is what a forge's `lockstep verify` checks. With the
   * server guard on, the guard itself fences each landing with the grant's proof, and an announcement
   * would only add a guarded write of the page to every push.
   */
  get announcesLandings(): boolean {
    return !this.file.serverGuard;
  }

  /**
   * Announces on the page, before the push is sent, that this clone's live grant lands `landing.to` on
   * `landing.branch` (what `lockstep verify` reads on a forge). Once per grant and commit: an identical
   * announcement already on the page (release --push, then its own pre-push hook) is not written again.
   * A write whose outcome is unknown throws, and the push is not sent; an announcement whose push then
   * never lands is harmless (the verifier asks only that each landed commit was announced). `seen`: the
   * page as this command just read it (the guard's), judged and swapped against instead of read again.
   */
  async announceLanding(landing: Landing, seen?: RecordAtRevision): Promise<{ announced: boolean }> {
    const proof = await this.holderProof();
    const current = seen ?? (await this.read());
    const already = landingAnnounced(current.record, proof.grant, landing);
    if (already && protocol.holds(current.record, proof.tokenHash, proof.grant, this.clock.now())) return { announced: false };
    await this.apply(r => protocol.announceLanding(r, proof, landing, this.clock.now(), this.settings), { ...HOLDER, first: current });
    return { announced: true };
  }

  petition(note?: string): Promise<{ position: number }> {
    return this.apply(record =>
      protocol.petition(record, { identity: this.identity, ...(note !== undefined ? { note } : {}) }, this.clock.now(), this.settings),
    );
  }

  withdraw(): Promise<{ position: number }> {
    return this.apply(record => protocol.withdraw(record, { identity: this.identity }, this.clock.now()));
  }

  leaseIds(to: string, count: number, newIdentity = false): Promise<{ start: number; end: number; spans: IdSpan[] }> {
    return this.holderProof().then(proof =>
      this.apply(record => protocol.leaseIds(record, proof, { to, count, newIdentity }, this.clock.now(), this.settings), HOLDER),
    );
  }

  nextId(): Promise<{ id: number }> {
    const holder = this.sessions.sessionProof();
    return this.apply(record => protocol.nextId(record, { identity: this.identity, ...(holder ? { holder } : {}) }, this.clock.now()));
  }

  assign(to: string, text: string, newIdentity = false): Promise<{ index: number }> {
    return this.holderProof().then(proof =>
      this.apply(record => protocol.assign(record, proof, { to, text, newIdentity }, this.clock.now(), this.settings), HOLDER),
    );
  }

  /** Marks a block done: the lead, or the block's assignee. */
  markDone(block: number): Promise<{ block: number; to: string }> {
    const holder = this.sessions.sessionProof();
    return this.apply(record =>
      protocol.markDone(record, { identity: this.identity, block, ...(holder ? { holder } : {}) }, this.clock.now()),
    );
  }

  clear(reason: string): Promise<{ clearedGrant: number; queueHead: string | null }> {
    return this.apply(record => protocol.clear(record, this.settings, { identity: this.identity, reason }, this.clock.now()));
  }

  /**
   * The store's own history of the record (git driver), newest first; undefined when it keeps none. A
   * signed page is read once and proven as every command proves it, and the history listed is that
   * proven revision's: a step written after the proof is not listed (it is proven at the next read).
   * `at`: the revision of a record this container's {@link read} returned (proven, on a signed page):
   * the history of the record the caller shows, read with no fetch (the lock page's timeline).
   */
  async history(limit: number, at?: string): Promise<HistoryEntry[] | undefined> {
    const driver = await this.driver();
    if (!driver.readHistory) return undefined;
    const from = at ?? (this.file.allowedSigners !== undefined ? (await this.read()).revision : undefined);
    return driver.readHistory(this.key, limit, from);
  }

  /** Bounds the store's history of the record (git driver); retried when the record moved meanwhile. */
  async compact(): Promise<{ squashed: number }> {
    const driver = await this.driver();
    if (!driver.compact) {
      throw new LockConfigurationError(`The ${driver.name} driver keeps no history to compact; compact applies to the git driver.`, {
        setting: 'driver',
      });
    }
    if (this.file.allowedSigners !== undefined) {
      // A signed page's snapshot is proven by its signer alone: only a proven page is compacted, by its last actor or an operator.
      const { record } = await this.read();
      if (!this.maySignCompaction(record)) {
        throw new LockRefusedError(
          'not-operator',
          `On a signed lock page only an operator (or the page's last actor) compacts its history; ${this.identity} is neither.`,
        );
      }
    }
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const result = await driver.compact(this.key);
      if (result.ok) return { squashed: result.squashed };
    }
    throw new LockBackendError(driver.name, 'The lock record kept changing during compaction; try again.');
  }

  /** Whether this person may sign a compaction of `record` (a signed page): its last actor, or an operator. */
  private maySignCompaction(record: LockRecord): boolean {
    const last = record.audit[record.audit.length - 1];
    return this.settings.operators.includes(this.identity) || last?.who === this.identity;
  }

  /**
   * After a write of this container landed: when the history it ends has {@link compactAfter} writes on
   * its last snapshot (one local `git rev-parse`), compacts it exactly as `lockstep compact` does —
   * the revision just written only, so a writer who came meanwhile compacts it in turn. Best effort
   * and never harmful: the command's outcome is already decided; a ref that moved leaves the page as
   * it is; a refusal by the remote (an older server guard) is told once and not tried again for the
   * next {@link COMPACTION_RETRY_WRITES} writes (compactionBackoff.ts); a timeout or a kill leaves the
   * page either compacted or as it was, and the next write's depth check finishes the job.
   */
  private compactAfterWrite(driver: Driver, written: RecordAtRevision): void {
    const { compact, historyReaches } = driver;
    if (compact === undefined || historyReaches === undefined) return;
    this.compacting = this.compacting
      .then(async () => {
        if (!(await historyReaches.call(driver, written.revision, this.compactAfter))) return;
        const backoff = new CompactionBackoff(this.clone.gitDir);
        if (backoff.skip()) return;
        // A signed page: this write was on top of a proven read and is signed by its writer, its last actor.
        if (this.file.allowedSigners !== undefined && !this.maySignCompaction(written.record)) return;
        try {
          const result = await compact.call(driver, this.key, written.revision);
          if (result.ok) backoff.clear();
        } catch (error) {
          // Only the remote's own answer is a refusal (refCells.ts refusedError); a git that failed or timed out
          // leaves the outcome unknown, and the next write looks again.
          if (!(error instanceof LockBackendError) || error.retryable || error instanceof GitError) return;
          if (backoff.refused()) {
            this.onNotice?.(
              `The lock page's history was not compacted: ${error.message} An older server guard refuses a compaction that keeps only the newest ${AUDIT_LOG_KEEP.toLocaleString('en')} audit entries (update it: lockstep hooks install --server). This clone tries again after ${COMPACTION_RETRY_WRITES} more writes.`,
            );
          }
        }
      })
      .catch(() => undefined);
  }

  /**
   * Calls `onChange` when the record may have changed elsewhere; undefined when the driver cannot
   * watch. `options.interest` lets a polling driver (git) poll fast only while this window holds,
   * waits or just asked (stores/pollPace.ts).
   */
  async watch(onChange: () => void, options?: WatchOptions): Promise<Watch | undefined> {
    const driver = await this.driver();
    return driver.watch?.(this.key, onChange, options);
  }

  async close(): Promise<void> {
    await this.compacting;
    if (this.driverPromise && !this.injected) {
      const driver = await this.driverPromise.catch(() => undefined);
      this.driverPromise = undefined;
      await driver?.close();
    }
  }

  /** The proof this clone's holder transitions present (settled against the page first where it must be). */
  private holderProof(): Promise<HolderProof> {
    return this.sessions.holderProof(() => this.read());
  }

  /**
   * One transition through the page's compare-and-swap (swapService.ts). A failure after a write was sent (a timeout, a dropped
   * connection, a push whose answer was lost: an outcome not known) says so, with `unknownOutcome` or words
   * that fit any change, so that nobody runs it again blind (a second lease-ids leases twice).
   */
  private async apply<T>(
    transition: (record: LockRecord) => Outcome<T>,
    options: SwapOptions<T> & { readonly unknownOutcome?: string } = {},
  ): Promise<T> {
    const driver = await this.driver();
    const { unknownOutcome, ...swapOptions } = options;
    let sent = false;
    try {
      return await swap({ driver, key: this.key, read: () => this.read() }, this.clock, transition, {
        ...swapOptions,
        beforeWrite: async value => {
          await swapOptions.beforeWrite?.(value);
          sent = true;
        },
        afterWrite: written => this.compactAfterWrite(driver, written),
      });
    } catch (error) {
      // A refusal, a lapsed lease, a damaged page are answers; so is a write the remote declined for good (the
      // server guard's reason). A backend that failed (a timeout, a dropped connection, a killed git) is not.
      const answered = (error instanceof LockError && !(error instanceof LockBackendError)) || error instanceof LockWriteDeclinedError;
      if (sent && !answered && error instanceof Error) {
        error.message += ` ${unknownOutcome ?? UNKNOWN_OUTCOME}`;
      }
      throw error;
    }
  }

  private driver(): Promise<Driver> {
    if (this.injected) return Promise.resolve(this.injected);
    this.driverPromise ??= openDriver(this.config);
    return this.driverPromise;
  }
}
