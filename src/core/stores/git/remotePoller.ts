import { systemClock, type Clock, type Timer } from '../../clock';
import type { Watch } from '../store';
import {
  combinedMode,
  fixedPace,
  freshnessOf,
  GIT_POLL_PACE,
  IDLE_INTEREST,
  interestOf,
  pollDelay,
  type PollPace,
  type WatchInterest,
} from '../pollPace';

/**
 * Live status for the git driver: git has no push notification, so watched refs are polled with
 * one `git ls-remote` for all of them per interval (cheap: no objects move), and listeners are
 * called when a ref's SHA moved. The interval follows pollPace.ts: fast only while a watcher says
 * its window holds, waits or just asked, slow otherwise, jittered, backing off after failures.
 * Polls never overlap, timers are unref'd (a watch never keeps a process alive), and a failed poll
 * is retried without throwing. A poll compares SHAs, so nothing is missed however many polls fail
 * or however slow the pace: the next good poll reports any move since the last one.
 */

/** The fast pace's bound, kept for callers that name one interval. */
export const DEFAULT_POLL_INTERVAL_MS = GIT_POLL_PACE.fast.maxMs;

interface Watched {
  readonly listeners: Set<() => void>;
  /** Last SHA seen (null: no ref); undefined until the first successful poll. */
  last: string | null | undefined;
  /** Bumped by {@link RemotePoller.observe}: a poll that started before it carries older news. */
  observed: number;
}

export class RemotePoller {
  private readonly watched = new Map<string, Watched>();
  private readonly interests = new Set<() => WatchInterest>();
  private readonly pace: PollPace;
  private timer: Timer | undefined;
  /** When the pending timer fires (clock ms), while one is pending. */
  private dueAt: number | undefined;
  private polling = false;
  private closed = false;
  /** Failed polls in a row (back-off); reset by a good poll or a good read of this process. */
  private failures = 0;

  constructor(
    private readonly lsRemote: (refs: readonly string[]) => Promise<Map<string, string>>,
    pace: PollPace | number = GIT_POLL_PACE,
    private readonly clock: Clock = systemClock,
    private readonly random: () => number = Math.random,
  ) {
    this.pace = typeof pace === 'number' ? fixedPace(pace) : pace;
  }

  /**
   * Calls `onChange` whenever `ref` moves. `baseline` is the SHA the caller last saw (from a read or
   * write), so a change between that read and the first poll is reported too. `interest` says
   * whether the watcher's window needs news fast (pollPace.ts); none: the slow pace.
   */
  watch(ref: string, onChange: () => void, baseline?: string | null, interest?: () => WatchInterest): Watch {
    const freshness = freshnessOf(this.pace);
    if (this.closed) return { dispose: () => undefined, freshness };
    let entry = this.watched.get(ref);
    if (!entry) {
      entry = { listeners: new Set(), last: baseline, observed: 0 };
      this.watched.set(ref, entry);
    }
    entry.listeners.add(onChange);
    const watched = entry;
    const asked = interest ? () => interestOf(interest) : undefined;
    if (asked) this.interests.add(asked);
    if (!this.polling) this.schedule(0);
    return {
      freshness,
      nudge: () => this.nudge(),
      dispose: () => {
        watched.listeners.delete(onChange);
        if (asked) this.interests.delete(asked);
        if (watched.listeners.size === 0 && this.watched.get(ref) === watched) this.watched.delete(ref);
        if (this.watched.size === 0) this.stop();
      },
    };
  }

  /**
   * A SHA this process saw by reading the ref or wrote to it: watchers hear of it at once instead
   * of at the next poll (a local write must not wait for the interval). The remote answered, so a
   * back-off ends.
   */
  observe(ref: string, sha: string | null, wrote: boolean): void {
    if (this.failures > 0) {
      this.failures = 0;
      this.nudge();
    }
    const entry = this.watched.get(ref);
    if (!entry) return;
    entry.observed++;
    this.update(entry, sha, wrote);
  }

  /** Re-decides the pending poll: brought forward when the pace is now faster, never pushed back. */
  nudge(): void {
    if (this.closed || this.polling || this.dueAt === undefined) return;
    const delay = this.nextDelay();
    if (this.clock.monotonic() + delay < this.dueAt) this.schedule(delay);
  }

  close(): void {
    this.closed = true;
    this.watched.clear();
    this.interests.clear();
    this.stop();
  }

  private stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.dueAt = undefined;
  }

  private nextDelay(): number {
    const interests = this.interests.size === 0 ? [IDLE_INTEREST] : [...this.interests].map(i => i());
    const mode = combinedMode(interests, this.clock.now(), this.pace);
    return pollDelay(mode, this.failures, this.pace, this.random());
  }

  private schedule(delayMs: number): void {
    if (this.closed || this.watched.size === 0) return;
    this.stop();
    this.dueAt = this.clock.monotonic() + delayMs;
    this.timer = this.clock.setTimer(delayMs, () => {
      this.timer = undefined;
      this.dueAt = undefined;
      void this.poll();
    });
  }

  private async poll(): Promise<void> {
    this.polling = true;
    try {
      const started = [...this.watched].map(([ref, entry]) => ({ ref, entry, observed: entry.observed }));
      const heads = await this.lsRemote(started.map(s => s.ref));
      this.failures = 0;
      for (const { ref, entry, observed } of started) {
        if (this.watched.get(ref) === entry && entry.observed === observed) this.update(entry, heads.get(ref) ?? null);
      }
    } catch {
      // Offline or refused: keep the last known SHAs and try again later. On the first failure the
      // watchers are told to look: their own read meets the outage and says so (a badge never shows
      // old news as fresh while the remote is away).
      this.failures++;
      if (this.failures === 1)
        for (const entry of [...this.watched.values()]) for (const listener of [...entry.listeners]) notify(listener);
    } finally {
      this.polling = false;
      this.schedule(this.nextDelay());
    }
  }

  private update(entry: Watched, sha: string | null, wrote = false): void {
    const moved = entry.last !== sha && (wrote || entry.last !== undefined);
    entry.last = sha;
    if (moved) for (const listener of [...entry.listeners]) notify(listener);
  }
}

function notify(listener: () => void): void {
  try {
    listener();
  } catch {
    // A listener's failure must not stop the poller or escape from a timer.
  }
}
