import { systemClock, type Clock, type Timer } from '../../clock';
import { freshnessOf, interestOf, pollDelay, pollMode, type PollPace } from '../pollPace';
import type { Watch, WatchOptions } from '../store';
import { recordChannel, type ChangeFeed } from './changeFeed';

/**
 * Change notification for container records of the SQL driver. Each watched key is read (one
 * primary-key read) at a pace from pollPace.ts, and writes made through this driver notify at once.
 *
 * - PostgreSQL: the record's write sends `NOTIFY` (changeFeed.ts) and the watch LISTENs, so a change
 *   is heard as it commits; a slow backup poll (every 30–36 s) reads the revision too, and is what
 *   connects the LISTEN again after a loss, so a lost notification is seen late but never missed.
 * - MySQL/MariaDB and SQLite have no push: the watch polls, fast (0.8–1 s) while its window holds,
 *   waits or just asked, slow (30–36 s) otherwise: at most 120 reads an idle hour.
 *
 * The timers never keep a process alive; reads never overlap; a failed read backs off and is
 * retried without throwing. `onChange` may be called more than once per change.
 */

/** MySQL/MariaDB and SQLite: polled. Fast 0.8–1 s while the window holds, waits or just asked; else 30–36 s. */
export const SQL_POLL_PACE: PollPace = {
  fast: { minMs: 800, maxMs: 1_000 },
  slow: { minMs: 30_000, maxMs: 36_000 },
  askedForMs: 60_000,
  maxBackoffMs: 2 * 60_000,
};

/** PostgreSQL: NOTIFY carries the news; this poll only backs it up (a lost notification, a dropped LISTEN). */
export const NOTIFY_BACKUP_PACE: PollPace = {
  fast: { minMs: 30_000, maxMs: 36_000 },
  slow: { minMs: 30_000, maxMs: 36_000 },
  askedForMs: 0,
  maxBackoffMs: 2 * 60_000,
};

export interface RecordWatchesOptions {
  /** Events from the database (PostgreSQL); none: poll only. */
  readonly feed?: ChangeFeed;
  /** Default: NOTIFY_BACKUP_PACE with a feed, SQL_POLL_PACE without. */
  readonly pace?: PollPace;
  readonly clock?: Clock;
  /** Jitter source in [0, 1). */
  readonly random?: () => number;
}

interface Watched {
  /** The revision last seen; undefined until the first read answered. */
  last: string | null | undefined;
  /** Bumped by every event and local write: a read that started before one carries older news. */
  events: number;
  readonly onChange: () => void;
}

export class RecordWatches {
  private readonly watches = new Map<string, Set<Watched>>();
  private readonly disposers = new Set<() => void>();
  private readonly feed: ChangeFeed | undefined;
  private readonly pace: PollPace;
  private readonly clock: Clock;
  private readonly random: () => number;

  constructor(
    private readonly readRevision: (key: string) => Promise<string | null>,
    options: RecordWatchesOptions = {},
  ) {
    this.feed = options.feed;
    this.pace = options.pace ?? (options.feed ? NOTIFY_BACKUP_PACE : SQL_POLL_PACE);
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
  }

  watch(key: string, onChange: () => void, options?: WatchOptions): Watch {
    const watched: Watched = { last: undefined, events: 0, onChange };
    let set = this.watches.get(key);
    if (!set) {
      set = new Set();
      this.watches.set(key, set);
    }
    set.add(watched);
    const interest = options?.interest;
    let timer: Timer | undefined;
    let dueAt: number | undefined;
    let polling = false;
    let disposed = false;
    let failures = 0;

    const subscription = this.feed?.subscribe(recordChannel(key), payload => {
      if (disposed || (payload !== '' && payload === watched.last)) return;
      watched.events++;
      if (payload !== '') watched.last = payload;
      call(onChange);
    });
    const nextDelay = () => pollDelay(pollMode(interestOf(interest), this.clock.now(), this.pace), failures, this.pace, this.random());
    const schedule = (delayMs: number) => {
      timer?.cancel();
      if (disposed) return;
      dueAt = this.clock.monotonic() + delayMs;
      timer = this.clock.setTimer(delayMs, () => {
        timer = undefined;
        dueAt = undefined;
        void poll();
      });
    };
    const poll = async () => {
      if (polling || disposed) return; // a slow database: never overlap reads
      polling = true;
      try {
        // LISTEN first, then read: a change committed before the LISTEN is read, one after is announced.
        await this.feed?.ready().catch(() => undefined);
        const seen = watched.events;
        const revision = await this.readRevision(key);
        failures = 0;
        if (watched.events === seen) {
          if (watched.last !== undefined && revision !== watched.last) call(onChange);
          watched.last = revision;
        }
      } catch {
        // An outage or a damaged row: the next operation reports it; keep watching, backing off.
        failures++;
      } finally {
        polling = false;
        schedule(nextDelay());
      }
    };
    const dispose = () => {
      if (disposed) return;
      disposed = true;
      timer?.cancel();
      timer = undefined;
      subscription?.dispose();
      set.delete(watched);
      if (set.size === 0 && this.watches.get(key) === set) this.watches.delete(key);
      this.disposers.delete(dispose);
    };
    this.disposers.add(dispose);
    void poll();
    return {
      dispose,
      // Joined the queue, or the user asked: a pending slow poll is brought forward, never pushed back.
      nudge: () => {
        if (disposed || polling || dueAt === undefined) return;
        const delay = nextDelay();
        if (this.clock.monotonic() + delay < dueAt) schedule(delay);
      },
      freshness: freshnessOf(this.pace),
      ...(this.feed ? { announced: true } : {}),
    };
  }

  /** A write through this driver: tell this process's watchers now, not at the next poll. */
  changed(key: string, revision: string): void {
    for (const watched of this.watches.get(key) ?? []) {
      watched.last = revision;
      watched.events++;
      queueMicrotask(() => call(watched.onChange));
    }
  }

  close(): void {
    for (const dispose of [...this.disposers]) dispose();
    this.watches.clear();
  }
}

function call(listener: () => void): void {
  try {
    listener();
  } catch {
    // A listener's failure is its own; it must not stop the polling.
  }
}
