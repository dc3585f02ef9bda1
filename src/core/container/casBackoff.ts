/**
 * How long a page transition that lost a compare-and-swap race waits before it reads again
 * (swapService.ts): a pure rule, its randomness injected.
 *
 * A burst of petitions used to collide round after round with the holder's heartbeat: every loser
 * retried after at most 25 ms, shorter than one round trip, and the holder had no precedence (issue
 * 30: the holders' writes lost 9–50 races in ~100 while fifty clones petitioned). Now:
 *
 *  - everyone else ('others': petition, withdraw, acquire, an operator's clear, …) backs off with
 *    "full jitter": a pause drawn uniformly from 0 to min(cap, round trip × 2^lost), so that the
 *    losers of a burst spread over ever more round trips and each round has fewer writers;
 *  - the holder's own transitions ('holder': heartbeat, release, leasing ids, assigning, announcing a
 *    landing before a push) retry at once after their first lost race and then within one round
 *    trip, never growing: while the others back off, the holder's next write meets few rivals.
 *
 * A compare-and-swap never livelocks (a lost race means another write landed), so precedence costs no
 * progress: it only decides who pays the wait.
 */

/** Whose transition is retrying: the lease holder's own, or anyone else's. */
export type SwapPrecedence = 'holder' | 'others';

/**
 * The longest single pause. One second is several round trips of the slowest driver (git: a fetch
 * and a push, 0.1–0.5 s) and hundreds of the fast ones (1–5 ms), enough for a burst of fifty to spread
 * out; and it bounds a transition that loses every race to about MAX_CAS_ATTEMPTS (swapService.ts) seconds
 * of pauses plus its round trips, within the CLI's patience for one command.
 */
export const CAS_BACKOFF_CAP_MS = 1_000;

/** A round trip measured below this (a ManualClock, the memory driver) counts as this, so that back-off still grows. */
export const MIN_ROUND_TRIP_MS = 1;

/**
 * The pause in milliseconds before the next attempt, after `lost` races lost so far by this
 * transition (1 after the first), whose last read and write took `roundTripMs`. `random` returns a
 * number in [0, 1), as Math.random.
 */
export function casRetryPause(lost: number, roundTripMs: number, precedence: SwapPrecedence, random: () => number = Math.random): number {
  const roundTrip = Math.max(MIN_ROUND_TRIP_MS, Number.isFinite(roundTripMs) ? roundTripMs : MIN_ROUND_TRIP_MS);
  if (precedence === 'holder') return lost <= 1 ? 0 : random() * Math.min(CAS_BACKOFF_CAP_MS, roundTrip);
  // 2^lost overflows to Infinity long after the cap is reached; min() keeps it finite.
  return random() * Math.min(CAS_BACKOFF_CAP_MS, roundTrip * 2 ** lost);
}
