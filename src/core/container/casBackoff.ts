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
 *    losers of a burst spread over ever more round trips and each round has fewer writers. One
 *    transition that loses all its races waits at most about (MAX_CAS_ATTEMPTS − 1) × cap: 24 s on
 *    the fast drivers, about 190 round trips on a slow one (git), half that on average, and only
 *    while the page keeps changing under every attempt;
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
 * The longest single pause: {@link CAS_BACKOFF_CAP_ROUND_TRIPS} round trips, and at least one second. The losers
 * of a burst must spread over several round trips, or they meet again in the next one (a fixed cap shorter than a
 * push to a forge, 0.3–1.5 s, would bring back the collisions of the old 25 ms pause). One second is hundreds of
 * round trips of the fast drivers (1–5 ms); eight round trips leave a burst of ten about one writer a round trip.
 */
export const CAS_BACKOFF_CAP_MS = 1_000;
export const CAS_BACKOFF_CAP_ROUND_TRIPS = 8;

/** A round trip measured below this (a ManualClock, the memory driver) counts as this, so that back-off still grows. */
export const MIN_ROUND_TRIP_MS = 1;

/**
 * The pause in milliseconds before the next attempt, after `lost` races lost so far by this
 * transition (1 after the first), whose last read and write took `roundTripMs`. `random` returns a
 * number in [0, 1), as Math.random.
 */
export function casRetryPause(lost: number, roundTripMs: number, precedence: SwapPrecedence, random: () => number = Math.random): number {
  const roundTrip = Math.max(MIN_ROUND_TRIP_MS, Number.isFinite(roundTripMs) ? roundTripMs : MIN_ROUND_TRIP_MS);
  const cap = Math.max(CAS_BACKOFF_CAP_MS, CAS_BACKOFF_CAP_ROUND_TRIPS * roundTrip);
  if (precedence === 'holder') return lost <= 1 ? 0 : random() * roundTrip;
  // 2^lost overflows to Infinity long after the cap is reached; min() keeps it finite.
  return random() * Math.min(cap, roundTrip * 2 ** lost);
}
