import type { Disposable } from '../store';

/**
 * Change notification for container records. SQL has no push that works in all three dialects, so
 * each watched key is polled (one primary-key read per interval; the timer never keeps a process
 * alive), and writes made through this driver notify at once. `onChange` may be called more than
 * once per change and never throws into a timer.
 */
export const RECORD_POLL_MS = 1_000;

interface Watch {
  /** The revision last seen; undefined until the first read answered. */
  last: string | null | undefined;
  readonly onChange: () => void;
}

export class RecordWatches {
  private readonly watches = new Map<string, Set<Watch>>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly readRevision: (key: string) => Promise<string | null>,
    private readonly intervalMs = RECORD_POLL_MS,
  ) {}

  watch(key: string, onChange: () => void): Disposable {
    const watch: Watch = { last: undefined, onChange };
    let set = this.watches.get(key);
    if (!set) {
      set = new Set();
      this.watches.set(key, set);
    }
    set.add(watch);
    let polling = false;
    const poll = async () => {
      if (polling) return; // a slow database: never overlap reads
      polling = true;
      try {
        const revision = await this.readRevision(key);
        if (watch.last !== undefined && revision !== watch.last) call(watch.onChange);
        watch.last = revision;
      } catch {
        // An outage or a damaged row: the next operation reports it; keep watching.
      } finally {
        polling = false;
      }
    };
    const timer = setInterval(() => {
      void poll();
    }, this.intervalMs);
    timer.unref();
    this.timers.add(timer);
    void poll();
    return {
      dispose: () => {
        clearInterval(timer);
        this.timers.delete(timer);
        set.delete(watch);
      },
    };
  }

  /** A write through this driver: tell this process's watchers now, not at the next poll. */
  changed(key: string, revision: string): void {
    for (const watch of this.watches.get(key) ?? []) {
      watch.last = revision;
      queueMicrotask(() => call(watch.onChange));
    }
  }

  close(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers.clear();
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
