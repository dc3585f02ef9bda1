import { MAX_RETRY_SLEEP_MS } from '../bounds';
import { systemClock, SECOND, type Clock } from '../clock';
import { resolveConfig, type LockManagerOptions, type ResolvedConfig } from '../config';
import { openDriver } from '../drivers';
import {
  describePage,
  LockBackendError,
  LockBusyError,
  LockConfigurationError,
  LockLeaseLostError,
  LockNoPageError,
  LockRefusedError,
  LockTamperedPageError,
  type PageLocation,
} from '../errors';
import * as protocol from '../lockRecord';
import type { ContainerSettings, HolderProof, IdSpan, Landing, LockRecord, Outcome } from '../lockRecord';
import { describe, type LockStatus } from '../lockStatus';
import { keyDigest } from '../names';
import { parseRecord } from '../recordCodec';
import type { DeploymentInfo, Driver, HistoryEntry, VersionedRecord, Watch, WatchOptions } from '../stores/store';
import { gitIn } from '../git/runner';
import { hashProof, hashToken, newOwnerToken, pushProof } from '../tokens';
import {
  containerFileOnRemote,
  hasPushProof,
  includePushConfig,
  landedUnderGrant,
  landingState,
  openClone,
  remoteBranchTip,
  removePushProof,
  resolveIdentity,
  writePushProof,
  type Clone,
} from './clone';
import {
  CONTAINER_DEFAULTS,
  CONTAINER_FILE,
  containerSettings,
  driverOptions,
  readContainerFile,
  type ContainerFile,
} from './containerFile';
import { pageLocation } from './pageLocation';
import { allowedSignersText, signedPageDriver, signingPolicy } from './signedPage';
import { ChangeWaiter, WAITING } from './turnWait';
import { resolveSharedRemote } from './sharedRemote';
import { clearPending, clearSession, readPending, readSession, writePending, writeSession, type Session } from './session';

type Env = Readonly<Record<string, string | undefined>>;

export interface OpenContainerOptions {
  readonly cwd: string;
  readonly env?: Env;
  readonly clock?: Clock;
  /** Settings from a layer between the environment and `.lockstep.json` (VS Code's `lockstep.*`). */
  readonly overrides?: { readonly identity?: string; readonly driver?: LockManagerOptions };
  /** An already open driver (tests, the extension's shared connection). Not closed by `close()`. */
  readonly driverInstance?: Driver;
}

/**
 * Reads a container's record without a clone or an identity: the server's guard runs in a bare
 * repository and only needs the record. The driver is closed before returning. A store without the
 * container's page throws {@link LockNoPageError}: a missing page is never a free lock.
 */
export async function readContainerRecord(
  file: ContainerFile,
  gitDir: string,
  env: Env,
  overrides: LockManagerOptions = {},
  proof?: ServerProof,
): Promise<LockRecord> {
  return (await readContainerPage(file, gitDir, env, overrides, proof)).record;
}

/**
 * How the server guard proves a signed page of a store whose writers are all participants (file,
 * SQL, Redis): the allowed signers as its pinned protected branch has them, and its own witness
 * kept in the guarded repository (stores/signedChainDriver.ts).
 */
export interface ServerProof {
  readonly allowedSigners: () => Promise<string>;
  readonly witnessFile: string;
}

/** Like {@link readContainerRecord}, with the page it read (driver as opened, location without credentials, prefix). */
export async function readContainerPage(
  file: ContainerFile,
  gitDir: string,
  env: Env,
  overrides: LockManagerOptions = {},
  proof?: ServerProof,
): Promise<{ record: LockRecord; page: PageLocation }> {
  const config = resolveConfig({ ...driverOptions(file, gitDir), ...overrides }, env);
  const driver = await openDriver(config);
  try {
    const page = pageLocation(config, file.container, driver.name);
    const stored = await driver.read(containerKey(config.prefix, file.container));
    if (stored === null) throw new LockNoPageError(page, committedPage(file, gitDir, overrides));
    if (proof !== undefined && file.allowedSigners !== undefined && driver.name !== 'git') {
      await signedPageDriver(driver).verifyHistory(stored.revision, {
        container: file.container,
        settings: containerSettings(file),
        allowedSigners: proof.allowedSigners,
        checkpointFile: proof.witnessFile,
      });
    }
    return { record: parseRecord(stored.value, driver.name, file.container, containerSettings(file)), page };
  } finally {
    await driver.close();
  }
}

/**
 * Appends a guard's refusal of a protected push to the container's page (the server guard, which
 * has no clone): best effort, a few compare-and-swap attempts, folded with identical refusals.
 * Never throws: the refusal stands whether or not its audit line could be written.
 */
export async function auditRefusedPushOnPage(
  file: ContainerFile,
  gitDir: string,
  overrides: LockManagerOptions,
  request: { identity: string; grant: number; detail: string },
  now: number,
): Promise<boolean> {
  try {
    const config = resolveConfig({ ...driverOptions(file, gitDir), ...overrides }, {});
    const driver = await openDriver(config);
    try {
      const key = containerKey(config.prefix, file.container);
      for (let attempt = 0; attempt < 5; attempt++) {
        const stored = await driver.read(key);
        if (stored === null) return false;
        const outcome = protocol.auditRefusedPush(
          parseRecord(stored.value, driver.name, file.container, containerSettings(file)),
          request,
          now,
        );
        if (outcome.ok || outcome.record === undefined) return false;
        if ((await driver.compareAndSwap(key, stored.revision, outcome.record, { summary: outcome.summary ?? 'push refused' })).ok)
          return true;
      }
      return false;
    } finally {
      await driver.close();
    }
  } catch {
    return false;
  }
}

/** Where `.lockstep.json` alone (no environment, no editor settings) puts the container's page. */
export function committedPage(file: ContainerFile, root: string, overrides: LockManagerOptions = {}): Omit<PageLocation, 'container'> {
  const { container: _, ...where } = pageLocation(resolveConfig({ ...driverOptions(file, root), ...overrides }, {}), file.container);
  return where;
}

/**
 * The store settings a clone opens its container's page with. `.lockstep.json` says which page it
 * is — driver, prefix, store location (file folder, Redis or database URL without credentials, git
 * remote); the environment and editor settings (`overrides`) supply credentials and machine-local
 * details only. One that points elsewhere is refused with {@link LockNoPageError} (exit 5) before
 * any store is opened: followed, it would read — or, with `adopt`, create — a second page.
 */
export function containerConfig(file: ContainerFile, root: string, env: Env, overrides: LockManagerOptions = {}): ResolvedConfig {
  const options = driverOptions(file, root);
  const config = resolveConfig({ ...options, ...overrides }, env);
  const committedConfig = resolveConfig(options, {});
  const page = pageLocation(config, file.container);
  const { container: _, ...committed } = pageLocation(committedConfig, file.container);
  const mismatch = pointingAway(committed, page, env);
  if (mismatch.length > 0) throw new LockNoPageError(page, committed, { mismatch });
  return config;
}

/** Which settings move the page away from the committed one: a variable's name, else the option's. */
function pointingAway(committed: Omit<PageLocation, 'container'>, page: PageLocation, env: Env): string[] {
  const named = (variable: string, option: string) => ((env[variable] ?? '') !== '' ? variable : `the ${option} setting`);
  const away: string[] = [];
  if (page.driver !== committed.driver) return [named('LOCKSTEP_DRIVER', 'driver')];
  if (page.prefix !== committed.prefix) away.push(named('LOCKSTEP_PREFIX', 'prefix'));
  if (page.location !== committed.location) {
    switch (page.driver) {
      case 'file':
        away.push(named('LOCKSTEP_PATH', 'path'));
        break;
      case 'redis':
        away.push(named('LOCKSTEP_REDIS_URL', 'redisUrl'));
        break;
      case 'sql':
        away.push(
          (env.LOCKSTEP_DATABASE_URL ?? '') === '' && (env.LOCKSTEP_PATH ?? '') !== ''
            ? 'LOCKSTEP_PATH'
            : named('LOCKSTEP_DATABASE_URL', 'databaseUrl'),
        );
        break;
      case 'git':
        away.push(named('LOCKSTEP_GIT_REMOTE', 'gitRemote'));
        break;
      default:
        away.push('the environment');
    }
  }
  return away;
}

export function containerKey(prefix: string, container: string): string {
  return keyDigest(prefix, `container:${container}`);
}

/** How often a transition re-reads after losing a compare-and-swap race. */
const MAX_CAS_ATTEMPTS = 25;

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
    throw new LockRefusedError(
      'not-initialised',
      `This clone has not pulled ${CONTAINER_FILE} yet: ${CONTAINER_DEFAULTS.remote}/${branch} has it (a teammate made this repository a container).` +
        ' Pull it (`git pull`) and run the command again; do not run lockstep init.',
      { cause: error },
    );
  }
}

/**
 * One container as seen from one clone: reads and writes the lock record through the driver's
 * compare-and-swap, keeps the clone's session and push proof in step with it. Every rule lives in
 * `lockRecord.ts`; this class only does I/O around it.
 */
export class Container {
  private driverPromise: Promise<Driver> | undefined;
  /** The grant whose unconfirmed release {@link settle} found on the page (the session is gone). */
  private finishedRelease: number | undefined;

  private constructor(
    readonly clone: Clone,
    readonly file: ContainerFile,
    readonly settings: ContainerSettings & { readonly heartbeatMs: number },
    readonly identity: string,
    readonly config: ResolvedConfig,
    private readonly clock: Clock,
    private readonly injected: Driver | undefined,
  ) {}

  static async open(options: OpenContainerOptions): Promise<Container> {
    const env = options.env ?? process.env;
    // `git config user.email` runs beside the clone's `git rev-parse` (the same repository from cwd);
    // its failure counts only after the clone and its .lockstep.json were found, as before.
    const identityLookup = resolveIdentity({ git: gitIn(options.cwd) }, env, options.overrides?.identity);
    identityLookup.catch(() => undefined);
    const opened = await openClone(options.cwd);
    const file = await readCommittedFile(opened);
    // The committed remote names are names of this clone's own remotes, never a path in the work tree, a command or an
    // option: checked before any git talks to a remote, and every later git of the clone may use only their transports.
    const shared = await Promise.all([
      resolveSharedRemote(opened.git, opened.root, file.remote, 'remote'),
      ...(file.driver === 'git' && (file.gitRemote ?? file.remote) !== file.remote
        ? [resolveSharedRemote(opened.git, opened.root, file.gitRemote ?? '', 'gitRemote')]
        : []),
    ]);
    const clone: Clone = { ...opened, git: gitIn(opened.root, { protocols: [...new Set(shared.flatMap(s => s.protocols))] }) };
    const identity = await identityLookup;
    const config = containerConfig(file, clone.root, env, options.overrides?.driver);
    return new Container(clone, file, containerSettings(file), identity, config, options.clock ?? systemClock, options.driverInstance);
  }

  /** The record's key in the store: a digest, never the container's id in clear. */
  get key(): string {
    return containerKey(this.config.prefix, this.file.container);
  }

  session(): Session | undefined {
    return readSession(this.clone.gitDir, this.file.container);
  }

  /** An acquire of this clone whose outcome is not known yet (after a read of the page settled what it could). */
  pendingAcquire(): Pick<Session, 'grant'> | undefined {
    const pending = readPending(this.clone.gitDir, this.file.container);
    return pending ? { grant: pending.grant } : undefined;
  }

  /** The page as stored. Throws {@link LockNoPageError} when the store holds none: never read as free. */
  async read(): Promise<{ record: LockRecord; revision: string }> {
    const driver = await this.driver();
    let stored = await driver.read(this.key);
    if (stored === null) throw new LockNoPageError(await this.page(), committedPage(this.file, this.clone.root));
    if (this.file.allowedSigners !== undefined) stored = await this.proven(driver, stored);
    const record = parseRecord(stored.value, driver.name, this.file.container, this.settings);
    await this.settle(record);
    return { record, revision: stored.revision };
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
      await signed.verifyHistory(again.revision, {
        ...policy,
        allowedSigners: () => allowedSignersText(this.clone, file, { fetch: true }),
      });
      return again;
    }
  }

  /**
   * Finishes or undoes what an interrupted command of this clone left, judged by the page just read
   * (docs/protocol.md#unknown-outcomes). An acquire whose write was sent but never confirmed left its
   * token in `pending.json`: when the page names that token the acquire is finished (session and push
   * proof written); when the page shows its grant number went to someone else, it is dropped; otherwise
   * (the write may still be on its way) it is kept, and the next acquire reuses its token. A release
   * whose write landed unconfirmed is finished (the session goes). A live session without its push proof
   * gets it back. Costs nothing when there is nothing to settle.
   */
  private async settle(record: LockRecord): Promise<void> {
    const gitDir = this.clone.gitDir;
    const pending = readPending(gitDir, this.file.container);
    if (pending) {
      const h = record.holder;
      if (h !== null && h.tokenHash === hashToken(pending.token)) await this.promote({ ...pending, grant: h.grant }, pending);
      else if (record.grant >= pending.grant) clearPending(gitDir, pending);
    }
    const session = this.session();
    if (!session) return;
    const tokenHash = hashToken(session.token);
    if (protocol.holds(record, tokenHash, session.grant, this.clock.now())) {
      if (this.file.serverGuard && !hasPushProof(this.clone)) await this.writeProofOf(session);
      return;
    }
    // Only the token's holder can release its grant: a release line for it is this clone's own release.
    const released = record.audit.some(l => l.action === 'release' && l.outcome === 'done' && l.grant === session.grant);
    if (released && record.holder?.tokenHash !== tokenHash) {
      clearSession(gitDir);
      removePushProof(this.clone);
      this.finishedRelease = session.grant;
    }
  }

  /** The acquire's write is on the page: the clone's session, then its push proof, and only then the pending file goes. */
  private async promote(session: Session, pending?: Session): Promise<void> {
    writeSession(this.clone.gitDir, session);
    if (this.file.serverGuard) await this.writeProofOf(session);
    if (pending) clearPending(this.clone.gitDir, pending);
  }

  /** The push proof of a session's grant, derived from its token (so a lost one can always be written again). */
  private writeProofOf(session: Session): Promise<void> {
    return writePushProof(this.clone, session.grant, pushProof(session.token, this.file.container, session.grant), this.file.remote);
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
    const held = this.sessionProof();
    if (held && protocol.holds(first, held.tokenHash, held.grant, this.clock.now())) {
      return { grant: held.grant, expiresAt: (first.holder as protocol.Holder).expiresAt, already: true };
    }
    const unsettled = readPending(this.clone.gitDir, this.file.container);
    const token = unsettled?.token ?? newOwnerToken();
    const tokenHash = hashToken(token);
    const deadline = this.clock.monotonic() + (options.wait ?? 0) * SECOND;
    const baseCommit = await base.catch(() => undefined);
    if (this.file.serverGuard) await includePushConfig(this.clone);
    let attempt: Session | undefined;
    for (;;) {
      let result: { grant: number; expiresAt: number };
      try {
        result = await this.apply(record => {
          const grant = record.grant + 1;
          const proofHash = hashProof(pushProof(token, this.file.container, grant));
          const outcome = protocol.acquire(
            record,
            this.settings,
            { identity: this.identity, tokenHash, proofHash, ...(options.ttl !== undefined ? { ttlMs: options.ttl * SECOND } : {}) },
            this.clock.now(),
          );
          if (outcome.ok) {
            attempt = {
              container: this.file.container,
              grant,
              token,
              identity: this.identity,
              acquiredAt: this.clock.now(),
              ...(baseCommit ? { base: baseCommit } : {}),
            };
            writePending(this.clone.gitDir, attempt);
          }
          return outcome;
        });
      } catch (error) {
        if (!(error instanceof LockRefusedError)) {
          // The write may have reached the store: the token stays in pending.json for the next command to settle.
          if (attempt !== undefined && error instanceof Error) {
            error.message +=
              ' Whether the lock was granted is not known yet: `lockstep status` (or `lockstep acquire`) in this clone finds out from the page and finishes it.';
          }
          throw error;
        }
        // The reused token's earlier write landed meanwhile: the read before this attempt finished it, and the
        // refusal ("you already hold it") is this clone's own grant. That is this acquire's success.
        if (error.reason === 'already-holder' && unsettled !== undefined) {
          const { record } = await this.read();
          const mine = this.sessionProof();
          if (mine && mine.tokenHash === tokenHash && protocol.holds(record, mine.tokenHash, mine.grant, this.clock.now())) {
            return { grant: mine.grant, expiresAt: (record.holder as protocol.Holder).expiresAt };
          }
        }
        // A refusal follows only answers the store gave: every write of this call was refused, none is in flight.
        if (attempt !== undefined && unsettled === undefined) clearPending(this.clone.gitDir, attempt);
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
      await this.promote({ ...attempt!, grant: result.grant }, attempt);
      return result;
    }
  }

  async heartbeat(): Promise<{ expiresAt: number; grant: number }> {
    const proof = await this.holderProof();
    try {
      const { expiresAt } = await this.apply(record => protocol.heartbeat(record, this.settings, proof, this.clock.now()));
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
    // An earlier release whose answer was lost did land: it is finished now, and said so.
    if (this.finishedRelease !== undefined && this.session() === undefined) {
      return { grant: this.finishedRelease, reclaimed: 0, landed: null, already: true };
    }
    const proof = await this.holderProof();
    const lost = protocol.release(record, proof, this.clock.now(), { settings: this.settings });
    if (!lost.ok && lost.error instanceof LockLeaseLostError) throw lost.error;
    const landed = await landing;
    const result = await this.apply(r =>
      protocol.release(r, proof, this.clock.now(), { settings: this.settings, ...(landed ? { landed } : {}) }),
    );
    clearSession(this.clone.gitDir);
    removePushProof(this.clone);
    return { ...result, landed: landed ?? null };
  }

  /**
   * Drops this clone's session and push proof on purpose (`lockstep forget`): for a lapsed lease
   * whose work will not be pushed. Refused while the session is the live holder (release that).
   */
  async forget(): Promise<{ grant: number | null }> {
    const proof = this.sessionProof();
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
    clearSession(this.clone.gitDir);
    removePushProof(this.clone);
    return { grant: proof?.grant ?? null };
  }

  /**
   * Whether this clone's work is not all on the remote's protected branch, as far as the last fetch
   * knows (no fetch: status stays read-only); undefined when that cannot be told.
   */
  async hasUnpushedWork(): Promise<boolean | undefined> {
    const branch = this.file.protectedBranches[0] ?? 'main';
    try {
      const landing = await landingState(this.clone, this.file.remote, branch, { fetch: false });
      return landing.unpushed > 0 || landing.dirtyCount > 0;
    } catch {
      return undefined;
    }
  }

  /** A guard refused a protected push from this clone: audit it on the page (best effort, folded when repeated). */
  async auditRefusedPush(detail: string): Promise<void> {
    const grant = this.session()?.grant ?? 0;
    await this.apply(record => protocol.auditRefusedPush(record, { identity: this.identity, grant, detail }, this.clock.now())).catch(
      () => undefined,
    );
  }

  /**
   * What stops a release: uncommitted tracked changes or commits the remote lacks (throws 'not-landed').
   * Returns the commit that landed under the session's grant: HEAD, when it is on the remote's branch,
   * was not there when the grant began, and was committed by this person or during the grant; undefined
   * when nothing of this grant landed (docs/protocol.md#landings-and-caution).
   */
  async checkLanded(session: Session | undefined = this.session(), options: { fetch?: boolean } = {}): Promise<string | undefined> {
    const branch = this.file.protectedBranches[0] ?? 'main';
    const landing = await landingState(this.clone, this.file.remote, branch, options);
    const problems: string[] = [];
    if (landing.dirtyCount > 0) {
      const more = landing.dirtyCount > landing.dirty.length ? ` and ${landing.dirtyCount - landing.dirty.length} more` : '';
      problems.push(`uncommitted changes to ${landing.dirty.join(', ')}${more}`);
    }
    if (landing.unpushed > 0)
      problems.push(`${landing.unpushed} commit${landing.unpushed === 1 ? '' : 's'} not on ${this.file.remote}/${branch}`);
    if (problems.length > 0) {
      throw new LockRefusedError(
        'not-landed',
        `Release is valid only after a push: you have ${problems.join(' and ')}. Commit and push to ${this.file.remote}/${branch}, then release (or: lockstep release --push).`,
      );
    }
    if (!landing.head || !landing.onRemote || !session) return undefined;
    const ours = await landedUnderGrant(this.clone, landing.head, session.base, this.identity);
    return ours ? landing.head.slice(0, 12) : undefined;
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
   * never lands is harmless (the verifier asks only that each landed commit was announced).
   */
  async announceLanding(landing: Landing): Promise<{ announced: boolean }> {
    const proof = await this.holderProof();
    const { record } = await this.read();
    const already = record.audit.some(
      l =>
        l.action === 'land' &&
        l.outcome === 'done' &&
        l.grant === proof.grant &&
        protocol.parseLandingDetail(l.detail)?.to === landing.to &&
        protocol.parseLandingDetail(l.detail)?.branch === landing.branch,
    );
    if (already && protocol.holds(record, proof.tokenHash, proof.grant, this.clock.now())) return { announced: false };
    await this.apply(r => protocol.announceLanding(r, proof, landing, this.clock.now(), this.settings));
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
      this.apply(record => protocol.leaseIds(record, proof, { to, count, newIdentity }, this.clock.now(), this.settings)),
    );
  }

  nextId(): Promise<{ id: number }> {
    const holder = this.sessionProof();
    return this.apply(record => protocol.nextId(record, { identity: this.identity, ...(holder ? { holder } : {}) }, this.clock.now()));
  }

  assign(to: string, text: string, newIdentity = false): Promise<{ index: number }> {
    return this.holderProof().then(proof =>
      this.apply(record => protocol.assign(record, proof, { to, text, newIdentity }, this.clock.now(), this.settings)),
    );
  }

  /** Marks a block done: the lead, or the block's assignee. */
  markDone(block: number): Promise<{ block: number; to: string }> {
    const holder = this.sessionProof();
    return this.apply(record =>
      protocol.markDone(record, { identity: this.identity, block, ...(holder ? { holder } : {}) }, this.clock.now()),
    );
  }

  clear(reason: string): Promise<{ clearedGrant: number; queueHead: string | null }> {
    return this.apply(record => protocol.clear(record, this.settings, { identity: this.identity, reason }, this.clock.now()));
  }

  /** The store's own history of the record (git driver), newest first; undefined when it keeps none. */
  async history(limit: number): Promise<HistoryEntry[] | undefined> {
    const driver = await this.driver();
    return driver.readHistory ? driver.readHistory(this.key, limit) : undefined;
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
      const last = record.audit[record.audit.length - 1];
      if (!this.settings.operators.includes(this.identity) && last?.who !== this.identity) {
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
    if (this.driverPromise && !this.injected) {
      const driver = await this.driverPromise.catch(() => undefined);
      this.driverPromise = undefined;
      await driver?.close();
    }
  }

  private async holderProof(): Promise<HolderProof> {
    // An interrupted acquire, or a live session without its push proof, is settled against the page first.
    if (readPending(this.clone.gitDir, this.file.container) || (this.file.serverGuard && this.session() && !hasPushProof(this.clone))) {
      await this.read();
    }
    const proof = this.sessionProof();
    if (!proof) {
      const { record } = await this.read();
      const next = protocol.nextStep(record, this.settings, this.identity, this.clock.now());
      throw new LockRefusedError('not-holder', `This clone does not hold the lock (it has no session). To hold it: ${next}.`);
    }
    return proof;
  }

  /** The proof of this clone's session, whether or not it is still the live grant. */
  private sessionProof(): HolderProof | undefined {
    const session = this.session();
    return session ? { identity: this.identity, tokenHash: hashToken(session.token), grant: session.grant } : undefined;
  }

  /**
   * Read → pure transition → compare-and-swap against the revision read; on a lost race, again.
   * A refusal that carries an audit line (operator clear) is written before it is reported.
   */
  private async apply<T>(transition: (record: LockRecord) => Outcome<T>): Promise<T> {
    const driver = await this.driver();
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const { record, revision } = await this.read();
      const outcome = transition(record);
      if (!outcome.ok) {
        if (outcome.record) {
          const audited = await driver.compareAndSwap(this.key, revision, outcome.record, { summary: outcome.summary ?? 'refused' });
          if (!audited.ok) continue;
        }
        throw outcome.error;
      }
      const written = await driver.compareAndSwap(this.key, revision, outcome.record, { summary: outcome.summary });
      if (written.ok) return outcome.value;
      await this.clock.sleep(Math.random() * MAX_RETRY_SLEEP_MS);
    }
    throw new LockBackendError(driver.name, 'The lock record kept changing under this update; try again.');
  }

  private driver(): Promise<Driver> {
    if (this.injected) return Promise.resolve(this.injected);
    this.driverPromise ??= openDriver(this.config);
    return this.driverPromise;
  }
}
