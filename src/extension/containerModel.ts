import * as vscode from 'vscode';
import {
  backoffDelay,
  Container,
  type ContainerFile,
  hasTurn,
  type HistoryEntry,
  isNoContainerHere,
  LockConfigurationError,
  LockError,
  LockLeaseLostError,
  LockNoPageError,
  type LockRecord,
  LockState,
  type LockStatus,
  LockTamperedPageError,
  systemClock,
  type WatchInterest,
} from '../core/application';
import type { BadgeFreshness, BadgeSource } from './badge';
import { Heartbeat } from './heartbeat';
import type { Log } from './log';
import type { ExtensionSettings } from './settings';
import { interestFor, settleMsFor } from './windowInterest';
import { WatchKeeper } from './watchKeeper';

/** How many of the git driver's commits the lock page's timeline reads (a week of a busy container). */
export const TIMELINE_ENTRIES = 2000;

/**
 * How long after a container's first read its history is read in the background, for the lock page's timeline
 * (prepareTimeline): after the window's start-up work, which it must not slow.
 */
const PREPARE_TIMELINE_AFTER_MS = 3_000;

/**
 * One container (one workspace folder's repository) as the extension sees it: the last record
 * read, the badge source derived from it, the heartbeat, and events when something changed.
 * Store connections open on the first refresh, never during activation.
 */
export class ContainerModel implements vscode.Disposable {
  private readonly _onDidChange = new vscode.EventEmitter<ContainerModel>();
  /** Fires after every refresh (the status may or may not differ). */
  readonly onDidChange = this._onDidChange.event;
  private readonly _onDidBecomeTurn = new vscode.EventEmitter<LockStatus>();
  /** Fires when this person becomes the one who may acquire (queue head after a release or expiry). */
  readonly onDidBecomeTurn = this._onDidBecomeTurn.event;
  private readonly _onDidLoseLease = new vscode.EventEmitter<LockLeaseLostError>();
  readonly onDidLoseLease = this._onDidLoseLease.event;

  private _source: BadgeSource = { kind: 'loading' };
  private _record: LockRecord | undefined;
  /** The revision of the record last read by the open container (its history is the timeline's). */
  private revision: string | undefined;
  private container: Container | undefined;
  private opening: Promise<Container> | undefined;
  /** The page's watch and the reads it needs besides its events (watchKeeper.ts). */
  private watcher: WatchKeeper | undefined;
  /** When the user last asked for news (Refresh, an action): a polling watch runs fast for a while. */
  private askedAt: number | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  /** The background read of the timeline's history, once per opened container (prepareTimeline). */
  private prepareTimer: NodeJS.Timeout | undefined;
  private timelinePrepared = false;
  private transitionTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  /** The grant whose loss was last reported: one notification per lost lease, whoever noticed it first. */
  private reportedLost: number | undefined;
  /** Our lease ran out while the store was unreachable (the heartbeat decided it locally); cleared by the next good read. */
  private lostOffline: { readonly grant: number; readonly expiredAt: number } | undefined;
  private inFlight: Promise<void> | undefined;
  private again = false;
  private disposed = false;
  readonly heartbeat: Heartbeat;

  constructor(
    readonly folder: vscode.WorkspaceFolder,
    private readonly log: Log,
    private settings: ExtensionSettings,
  ) {
    this.heartbeat = new Heartbeat({
      beat: async () => (await this.open()).heartbeat(),
      intervalMs: () => this.container?.settings.heartbeatMs ?? 10 * 60_000,
      onBeat: expiresAt => {
        this.log.debug(`${this.folder.name}: heartbeat, lease until ${new Date(expiresAt).toISOString()}`);
        void this.refresh();
      },
      onLost: (loss, grant) => {
        if (loss.reason === 'expired' && loss.lastError !== undefined) {
          this.lostOffline = { grant, expiredAt: loss.expiresAt };
          this.setOffline(loss.lastError, backoffDelay(this.failures + 1));
        }
        this.reportLost(loss.reason === 'superseded' ? loss.error : new LockLeaseLostError(loss.error.message, grant));
        void this.refresh();
      },
      onFailed: (error, retryIn) => {
        this.log.error(`${this.folder.name}: heartbeat failed, retrying in ${Math.round(retryIn / 1000)} s`, error);
        this.setOffline(error, retryIn);
      },
    });
  }

  get source(): BadgeSource {
    return this._source;
  }
  get record(): LockRecord | undefined {
    return this._record;
  }
  get status(): LockStatus | undefined {
    return this._source.kind === 'status' ? this._source.status : undefined;
  }
  get identity(): string | undefined {
    return this.container?.identity;
  }
  get isOperator(): boolean {
    return this._source.kind === 'status' && this._source.isOperator;
  }
  get root(): string {
    return this.container?.clone.root ?? this.folder.uri.fsPath;
  }

  updateSettings(settings: ExtensionSettings): void {
    this.settings = settings;
    // Identity or store changes need a fresh container; the next refresh opens it.
    void this.reopen();
  }

  /**
   * Re-reads the record. Concurrent calls coalesce into at most one more read. `asked`: the user
   * asked (the Refresh command), so a polling watch (git) polls fast for a while.
   */
  refresh(options: { asked?: boolean } = {}): Promise<void> {
    if (this.disposed) return Promise.resolve();
    if (options.asked) this.markAsked();
    if (this.inFlight) {
      this.again = true;
      return this.inFlight;
    }
    this.inFlight = (async () => {
      do {
        this.again = false;
        await this.readOnce();
      } while (this.again && !this.disposed);
    })().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** Runs an action against the container, then refreshes whatever happened. */
  async act<T>(action: (container: Container) => Promise<T>): Promise<T> {
    this.markAsked();
    const container = await this.open();
    try {
      return await action(container);
    } finally {
      await this.refresh();
    }
  }

  /**
   * The store's own history of the record (git driver: every transition), newest first; undefined for other
   * drivers. That of the record last read, when there is one: the timeline goes with the page shown.
   */
  async history(limit: number): Promise<HistoryEntry[] | undefined> {
    return (await this.open()).history(limit, this.revision);
  }

  /** The committed `.lockstep.json`, once opened. */
  get containerFile(): ContainerFile | undefined {
    return this.container?.file;
  }

  /** The container's lease length, once opened. */
  get leaseTtlMs(): number | undefined {
    return this.container?.settings.leaseTtlMs;
  }

  async reopen(): Promise<void> {
    await this.closeContainer();
    await this.refresh();
  }

  dispose(): void {
    this.disposed = true;
    this.heartbeat.dispose();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.prepareTimer) clearTimeout(this.prepareTimer);
    if (this.transitionTimer) clearTimeout(this.transitionTimer);
    void this.closeContainer();
    this._onDidChange.dispose();
    this._onDidBecomeTurn.dispose();
    this._onDidLoseLease.dispose();
  }

  private async readOnce(): Promise<void> {
    const previous = this._source;
    try {
      const container = await this.open();
      const { record, revision } = await container.read();
      const status = container.describe(record);
      this._record = record;
      this.revision = revision;
      this._source = {
        kind: 'status',
        status,
        isOperator: container.settings.operators.includes(container.identity),
        freshness: this.freshness(status),
      };
      this.failures = 0;
      const wasLostOffline = this.lostOffline !== undefined;
      this.lostOffline = undefined;
      if (this.retryTimer) {
        clearTimeout(this.retryTimer);
        this.retryTimer = undefined;
      }
      this.heartbeat.update(status);
      this.scheduleTransition(status);
      this.prepareTimeline();
      // Holding or waiting now (or no longer): a polling watch re-decides its pace (interest()).
      this.watcher?.nudge();
      // A read can find our lease gone before the heartbeat does (the window slept, the store was away past
      // expiry): confirm it with one heartbeat, which reports the loss as core words it and drops the push proof.
      const held = (previous.kind === 'status' && previous.status.state === LockState.HeldByMe) || wasLostOffline;
      if (held && status.state === LockState.Stale) void this.confirmLost(container);
      // Your turn after a release (your-turn) or over a silent holder (holder-silent): one notice when it comes.
      const wasTurn = previous.kind === 'status' && hasTurn(previous.status);
      if (hasTurn(status) && !wasTurn) this._onDidBecomeTurn.fire(status);
    } catch (error) {
      if (isNoContainerHere(error)) {
        this._source = { kind: 'not-initialised' };
        await this.closeContainer();
      } else {
        this.failures += 1;
        this.log.error(`${this.folder.name}: could not read the lock`, error);
        this.setOffline(error, backoffDelay(this.failures));
        // Not a free lock and not an outage: the environment points at a store without this container's page.
        if (error instanceof LockNoPageError && this._source.kind === 'offline') this._source = { ...this._source, kind: 'no-page' };
        // Nor a free lock: a step of the page's history is not proven (a signed page); the holder it names is never shown.
        if (error instanceof LockTamperedPageError && this._source.kind === 'offline') this._source = { ...this._source, kind: 'tampered' };
        // Not an outage either: the committed settings break their schema (fixing and saving the file reopens the container).
        if (error instanceof LockConfigurationError && this._source.kind === 'offline')
          this._source = { ...this._source, kind: 'misconfigured' };
      }
    }
    this._onDidChange.fire(this);
  }

  /**
   * Once per opened container, a few seconds after its first read: the history of the record read, as the lock
   * page's timeline reads it, read in the background and dropped. On the git driver this is the clone's costly
   * first read of the history (each record since the last snapshot parsed: 80 ms on a page a year old, issue 30),
   * whose entries are kept in `.git/lockstep/`; the page then opens at the cost of the commits written since (26 ms).
   * Nothing is fetched: the history is that of the revision just read. Other drivers keep no history: nothing runs.
   */
  private prepareTimeline(): void {
    if (this.timelinePrepared || this.disposed) return;
    this.timelinePrepared = true;
    this.prepareTimer = setTimeout(() => {
      this.prepareTimer = undefined;
      this.history(TIMELINE_ENTRIES).then(
        entries => {
          if (entries !== undefined) this.log.debug(`${this.folder.name}: the timeline's history read (${entries.length} entries)`);
        },
        // The lock page reads it again when shown, and says when it could not.
        error => this.log.debug(`${this.folder.name}: the timeline's history could not be read in the background: ${String(error)}`),
      );
    }, PREPARE_TIMELINE_AFTER_MS);
    this.prepareTimer.unref?.();
  }

  private async confirmLost(container: Container): Promise<void> {
    try {
      await container.heartbeat();
    } catch (error) {
      if (error instanceof LockLeaseLostError) this.reportLost(error);
    }
  }

  private reportLost(error: LockLeaseLostError): void {
    if (error.grant !== undefined && this.reportedLost === error.grant) return;
    this.reportedLost = error.grant;
    this.log.warn(`${this.folder.name}: lease lost — ${error.message}`);
    this._onDidLoseLease.fire(error);
  }

  /**
   * Some states change with time alone, with no write to the record: a lease runs out (HOLDER SILENT,
   * or Stale for our own), a handover window ends. Re-read at the next such instant, so the badge
   * turns then rather than at the next poll.
   */
  private scheduleTransition(status: LockStatus): void {
    if (this.transitionTimer) clearTimeout(this.transitionTimer);
    this.transitionTimer = undefined;
    const now = Date.now();
    const next = Math.min(...[status.holder?.expiresAt, status.turn?.endsAt].filter((t): t is number => t !== undefined && t > now));
    if (this.disposed || !Number.isFinite(next)) return;
    // A little past the instant, so that the read sees it passed; capped to what setTimeout accepts.
    this.transitionTimer = setTimeout(
      () => {
        this.transitionTimer = undefined;
        void this.refresh();
      },
      Math.min(next - now + 50, 2 ** 31 - 1),
    );
  }

  private setOffline(error: unknown, retryInMs: number): void {
    const message = error instanceof LockError ? error.message : 'The lock could not be read.';
    const retryAt = Date.now() + retryInMs;
    this._source = this.lostOffline ? { kind: 'lease-lost-offline', ...this.lostOffline, retryAt } : { kind: 'offline', message, retryAt };
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.refresh();
    }, retryInMs);
    this._onDidChange.fire(this);
  }

  private open(): Promise<Container> {
    if (this.container) return Promise.resolve(this.container);
    this.opening ??= (async () => {
      try {
        const container = await Container.open({
          cwd: this.folder.uri.fsPath,
          overrides: { ...(this.settings.identity ? { identity: this.settings.identity } : {}), driver: this.settings.store },
          onNotice: message => this.log.warn(`${this.folder.name}: ${message}`),
        });
        this.container = container;
        const watcher = new WatchKeeper({
          open: (onChange, options) => container.watch(onChange, options),
          read: () => {
            void this.refresh();
          },
          pollMs: () => this.settings.pollSeconds * 1000,
          interest: () => this.interest(),
          settleMs: () => settleMsFor(this.status),
          clock: systemClock,
          onOpenFailed: error => this.log.error(`${this.folder.name}: live updates unavailable, polling instead`, error),
        });
        this.watcher = watcher;
        await watcher.start();
        this.log.info(
          `${this.folder.name}: container ${container.file.container} on the ${container.config.driver} driver, as ${container.identity}${watcher.watching ? ' (live updates)' : ''}`,
        );
        return container;
      } finally {
        this.opening = undefined;
      }
    })();
    return this.opening;
  }

  /**
   * What this window is doing with the lock, for a polling watch's pace (core/stores/pollPace.ts):
   * fast while it holds, heads the queue, has its turn, or the user just asked (windowInterest.ts).
   */
  private interest(): WatchInterest {
    return interestFor(this.status, this.askedAt);
  }

  private markAsked(): void {
    this.askedAt = Date.now();
    this.watcher?.nudge();
  }

  /** The bound the tooltip states: the watch's own (watchKeeper.ts), or the poll setting before the container opened. */
  private freshness(status: LockStatus): BadgeFreshness {
    return this.watcher?.freshness(settleMsFor(status)) ?? { withinMs: this.settings.pollSeconds * 1000 };
  }

  private async closeContainer(): Promise<void> {
    this.watcher?.dispose();
    this.watcher = undefined;
    const container = this.container;
    this.container = undefined;
    this.revision = undefined;
    if (this.prepareTimer) clearTimeout(this.prepareTimer);
    this.prepareTimer = undefined;
    this.timelinePrepared = false;
    await container?.close().catch(() => undefined);
  }
}
