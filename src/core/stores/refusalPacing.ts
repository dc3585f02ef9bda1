/**
 * Pacing for refused claims on a driver whose operations are synchronous disk work (the file
 * driver), so that clients retrying a busy name in a tight loop leave the process to its holder.
 *
 * Every operation of such a driver lets one turn of the event loop pass before it resolves, so
 * pending I/O always runs. That alone is not enough for a client that retries at once: each
 * retry costs the process a read of the lease, and seven such clients make each turn, and so the
 * holder's own I/O, several times slower. A client refused the same key again within
 * {@link HOT_MS} of its last refusal is spinning, so its refusal answers after a short pause
 * ({@link PAUSE_MS}) instead of one turn: the classic backoff of a spin lock. A release of the key
 * in this process ends the pause of the client that has waited longest, so a released lease passes
 * to a client of the same process without waiting out a pause, first come first served. A refusal
 * that follows no recent one (a scan of many names, a waiting acquire's own retries, which
 * sleep 5–25 ms) still answers after one turn.
 *
 * Pauses are shared by key only; the same key in another store of this process only ends a pause
 * early, which costs one extra read.
 */

/** A refusal of the same key by the same client this soon after its last one is a spin. */
export const HOT_MS = 1;
/** How long a spinning client's refusal waits, unless a release of the key in this process ends it. */
export const PAUSE_MS = 1;

/** The pauses of this process, per key: a release wakes them. */
const paused = new Map<string, Set<() => void>>();
/** A client remembers the last refusal of at most this many keys. */
const MAX_REMEMBERED = 1024;

/** One turn of the event loop (its poll phase runs pending I/O callbacks). */
export function nextTurn(): Promise<void> {
  return new Promise(resolve => setImmediate(resolve));
}

export interface PacingOptions {
  /** Milliseconds, monotonic (default performance.now). */
  readonly now?: () => number;
  readonly hotMs?: number;
  readonly pauseMs?: number;
}

export class RefusalPacing {
  /** When this client's last refusal of each key resolved. */
  readonly #lastRefusal = new Map<string, number>();
  readonly #now: () => number;
  readonly #hotMs: number;
  readonly #pauseMs: number;

  constructor(options: PacingOptions = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#hotMs = options.hotMs ?? HOT_MS;
    this.#pauseMs = options.pauseMs ?? PAUSE_MS;
  }

  /** Waits before a refusal resolves: one turn, or a pause when the client is spinning on `key`. */
  async refused(key: string): Promise<void> {
    const last = this.#lastRefusal.get(key);
    if (last !== undefined && this.#now() - last < this.#hotMs) await pause(key, this.#pauseMs);
    else await nextTurn();
    if (this.#lastRefusal.size >= MAX_REMEMBERED && !this.#lastRefusal.has(key)) this.#lastRefusal.clear();
    this.#lastRefusal.set(key, this.#now());
  }

  /** This client claimed `key`: it is no longer spinning on it. */
  claimed(key: string): void {
    this.#lastRefusal.delete(key);
  }

  /**
   * A lease on `key` was released in this process: the client paused on it longest retries now.
   * (Waking them all would have all but one refused again at once.)
   */
  released(key: string): void {
    const first = paused.get(key)?.values().next();
    if (first !== undefined && first.done !== true) first.value();
  }
}

/** `ms`, or less when a release of `key` in this process comes first. */
async function pause(key: string, ms: number): Promise<void> {
  await new Promise<void>(resolve => {
    let waiting = paused.get(key);
    if (waiting === undefined) {
      waiting = new Set();
      paused.set(key, waiting);
    }
    const wake = () => {
      clearTimeout(timer);
      waiting!.delete(wake);
      if (waiting!.size === 0 && paused.get(key) === waiting) paused.delete(key);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    waiting.add(wake);
  });
}
