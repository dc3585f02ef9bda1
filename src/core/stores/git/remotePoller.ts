import type { Disposable } from '../store';

/**
 * Live status for the git driver: git has no push notification, so watched refs are polled with
 * one `git ls-remote` for all of them per interval (cheap: no objects move), and listeners are
 * called when a ref's SHA moved. Polls never overlap, timers are unref'd (a watch never keeps a
 * process alive), and a failed poll is retried on the next tick without throwing.
 */

export const DEFAULT_POLL_INTERVAL_MS = 2_000;

interface Watched {
  readonly listeners: Set<() => void>;
  /** Last SHA seen (null: no ref); undefined until the first successful poll. */
  last: string | null | undefined;
  /** Bumped by {@link RemotePoller.observe}: a poll that started before it carries older news. */
  observed: number;
}

export class RemotePoller {
  private readonly watched = new Map<string, Watched>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private closed = false;

  constructor(
    private readonly lsRemote: (refs: readonly string[]) => Promise<Map<string, string>>,
    private readonly intervalMs: number = DEFAULT_POLL_INTERVAL_MS,
  ) {}

  /**
   * Calls `onChange` whenever `ref` moves. `baseline` is the SHA the caller last saw (from a read or
   * write), so a change between that read and the first poll is reported too.
   */
  watch(ref: string, onChange: () => void, baseline?: string | null): Disposable {
    if (this.closed) return { dispose: () => undefined };
    let entry = this.watched.get(ref);
    if (!entry) {
      entry = { listeners: new Set(), last: baseline, observed: 0 };
      this.watched.set(ref, entry);
    }
    entry.listeners.add(onChange);
    const watched = entry;
    if (!this.polling) this.schedule(0);
    return {
      dispose: () => {
        watched.listeners.delete(onChange);
        if (watched.listeners.size === 0 && this.watched.get(ref) === watched) this.watched.delete(ref);
        if (this.watched.size === 0) this.stop();
      },
    };
  }

  /**
   * A SHA this process saw by reading the ref or wrote to it: watchers hear of it at once instead
   * of at the next poll (a local write must not wait for the interval).
   */
  observe(ref: string, sha: string | null, wrote: boolean): void {
    const entry = this.watched.get(ref);
    if (!entry) return;
    entry.observed++;
    this.update(entry, sha, wrote);
  }

  close(): void {
    this.closed = true;
    this.watched.clear();
    this.stop();
  }

  private stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(delayMs: number): void {
    if (this.closed || this.watched.size === 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.poll();
    }, delayMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    this.polling = true;
    try {
      const started = [...this.watched].map(([ref, entry]) => ({ ref, entry, observed: entry.observed }));
      const heads = await this.lsRemote(started.map(s => s.ref));
      for (const { ref, entry, observed } of started) {
        if (this.watched.get(ref) === entry && entry.observed === observed) this.update(entry, heads.get(ref) ?? null);
      }
    } catch {
      // Offline or refused: keep the last known SHAs and try again on the next tick.
    } finally {
      this.polling = false;
      this.schedule(this.intervalMs);
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
