import type { IOptions } from 'etcd3';

type GlobalPolicy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

/**
 * The etcd client's global policy for Lockstep: try the call again on another member only when the call
 * was certainly never sent — the client had no connection to the member it picked (gRPC's "No connection
 * established", or a member whose circuit is open). The client's default retries every recoverable error,
 * which re-sends a write whose first attempt may have been committed: a compare-and-swap sent twice then
 * fails its comparison against its own write, and the caller would believe it lost a race it won. A
 * write whose outcome is unknown is reported as a typed error instead, and core's recovery settles it.
 */
export function unsentRetryPolicy(attempts: number): GlobalPolicy {
  const policy = {
    async execute<T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T, signal?: AbortSignal): Promise<T> {
      const context = { signal: signal ?? new AbortController().signal };
      for (let attempt = 1; ; attempt++) {
        try {
          return await fn(context);
        } catch (error) {
          if (attempt >= attempts || !neverSent(error)) throw error;
        }
      }
    },
  };
  // Only `execute` is called by the client's connection pool (etcd3 1.1: connection-pool.js).
  return policy as unknown as GlobalPolicy;
}

function neverSent(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // cockatiel's BrokenCircuitError says "Execution prevented because the circuit breaker is open".
  return /No connection established|circuit breaker is open/i.test(error.message);
}
