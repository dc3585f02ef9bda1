/**
 * How often a polling watch asks its remote (the git driver's `git ls-remote`), as a pure rule:
 * fast only while the window that watches needs to hear of a change at once — it holds the lock,
 * waits for it (queued, queue head, your turn), or the user just asked (Refresh, an action) — and
 * slow otherwise, so that a window left open all day costs at most one request per slow interval.
 * Jitter spreads fifty windows' polls apart; failures back off. No clock, timer or I/O here.
 */

/** What the watching window is doing with the lock, as its owner (the extension) last saw it. */
export interface WatchInterest {
  /** This window holds the lock. */
  readonly holds: boolean;
  /** This window waits for it: queued, the queue head, or its turn. */
  readonly waits: boolean;
  /** When the user last asked for news (Refresh, an action), epoch ms. */
  readonly askedAt?: number;
}

/** Nobody in this window holds or waits: the slow pace. A watch whose owner says nothing is idle. */
export const IDLE_INTEREST: WatchInterest = { holds: false, waits: false };

/** What a watch's owner says it is doing; idle when it says nothing or its answer throws (a watch never fails for it). */
export function interestOf(interest: (() => WatchInterest) | undefined): WatchInterest {
  try {
    return interest?.() ?? IDLE_INTEREST;
  } catch {
    return IDLE_INTEREST;
  }
}

/** A range of delays between two polls: each delay is drawn in [minMs, maxMs] (the jitter). */
export interface PaceRange {
  readonly minMs: number;
  readonly maxMs: number;
}

export interface PollPace {
  /** While this window holds, waits, or the user just asked. Its maxMs is the fast freshness bound. */
  readonly fast: PaceRange;
  /** Otherwise. Its minMs bounds the requests per hour; its maxMs is the idle freshness bound. */
  readonly slow: PaceRange;
  /** How long after the user asked the pace stays fast. */
  readonly askedForMs: number;
  /** The longest delay after failed polls (back-off doubles from the pace's delay up to this). */
  readonly maxBackoffMs: number;
}

/**
 * The git driver's pace. Slow: every 30–36 s, never sooner than 30 s, so at most 120 requests an
 * hour per idle window (jitter only lengthens); a change is seen within 36 s. Fast: every 1.6–2 s
 * (jitter only shortens), so a holder or waiter sees a change within 2 s.
 */
export const GIT_POLL_PACE: PollPace = {
  fast: { minMs: 1_600, maxMs: 2_000 },
  slow: { minMs: 30_000, maxMs: 36_000 },
  askedForMs: 60_000,
  maxBackoffMs: 5 * 60_000,
};

/** One fixed interval for both paces (tests and benchmarks that want a known cadence). */
export function fixedPace(intervalMs: number): PollPace {
  const range = { minMs: intervalMs, maxMs: intervalMs };
  return { fast: range, slow: range, askedForMs: 0, maxBackoffMs: Math.max(intervalMs, GIT_POLL_PACE.maxBackoffMs) };
}

export type PollMode = 'fast' | 'slow';

/** Fast while the window holds, waits, or the user asked less than `askedForMs` ago. */
export function pollMode(interest: WatchInterest, now: number, pace: PollPace): PollMode {
  if (interest.holds || interest.waits) return 'fast';
  if (interest.askedAt !== undefined && now >= interest.askedAt && now - interest.askedAt < pace.askedForMs) return 'fast';
  return 'slow';
}

/** The fastest mode any of the watchers asks for (one poll serves every watched ref). */
export function combinedMode(interests: Iterable<WatchInterest>, now: number, pace: PollPace): PollMode {
  for (const interest of interests) if (pollMode(interest, now, pace) === 'fast') return 'fast';
  return 'slow';
}

/**
 * The delay before the next poll. `random` in [0, 1) draws the jitter inside the mode's range;
 * after `failures` failed polls in a row the delay doubles per failure, capped at `maxBackoffMs`
 * (never below the mode's own delay).
 */
export function pollDelay(mode: PollMode, failures: number, pace: PollPace, random: number): number {
  const range = mode === 'fast' ? pace.fast : pace.slow;
  const r = Math.min(Math.max(random, 0), 1);
  const base = range.minMs + (range.maxMs - range.minMs) * r;
  if (failures <= 0) return base;
  const cap = Math.max(pace.maxBackoffMs, base);
  return Math.min(base * 2 ** Math.min(failures, 20), cap);
}

/** The stated freshness of a watch at this pace: a change is seen within these (ms), idle and fast. */
export interface WatchFreshness {
  readonly idleMs: number;
  readonly activeMs: number;
}

export function freshnessOf(pace: PollPace): WatchFreshness {
  return { idleMs: pace.slow.maxMs, activeMs: pace.fast.maxMs };
}
