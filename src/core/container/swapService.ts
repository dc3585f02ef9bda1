import type { Clock } from '../clock';
import { LockBackendError } from '../errors';
import type { LockRecord, Outcome } from '../lockRecord';
import type { Driver } from '../stores/store';
import { casRetryPause, type SwapPrecedence } from './casBackoff';

/** How often a transition re-reads after losing a compare-and-swap race. */
export const MAX_CAS_ATTEMPTS = 25;

/** The page as one read found it: the record and the revision a compare-and-swap expects. */
export interface RecordAtRevision {
  readonly record: LockRecord;
  readonly revision: string;
}

/** The page a swap reads and writes: its driver, its key, and the read that proves and settles what it read. */
export interface SwapPage {
  readonly driver: Driver;
  readonly key: string;
  read(): Promise<RecordAtRevision>;
}

export interface SwapOptions<T> {
  /** The page as the caller just read it: the first attempt's, instead of reading it again (a lost race reads afresh). */
  readonly first?: RecordAtRevision;
  /**
   * Runs once before each write of an accepted transition, with what the transition granted, and the
   * write waits for it (an acquire keeps its token in `pending.json` first: sessionChoreography.ts).
   */
  readonly beforeWrite?: (value: T) => void | Promise<void>;
  /** Told of each write that landed (an audited refusal's too): the revision written and its record. */
  readonly afterWrite?: (written: RecordAtRevision) => void;
  /**
   * 'holder' for the lease holder's own transitions (heartbeat, release, …): after a lost race they retry at
   * once, while everyone else's ('others', the default) back off with growing pauses (casBackoff.ts).
   */
  readonly precedence?: SwapPrecedence;
  /** Uniform in [0, 1), for the retry pauses' jitter; Math.random unless a unit test fixes it. */
  readonly random?: () => number;
}

/**
 * Read → pure transition → compare-and-swap against the revision read; on a lost race, again (at
 * most {@link MAX_CAS_ATTEMPTS} times), after a pause that casBackoff.ts draws from this swap's own
 * round trip (its last read and write, on the injected clock) and its precedence. A refusal that
 * carries an audit line (an operator's clear, a refused push) is written before it is reported.
 */
export async function swap<T>(
  page: SwapPage,
  clock: Clock,
  transition: (record: LockRecord) => Outcome<T>,
  options: SwapOptions<T> = {},
): Promise<T> {
  const { driver, key } = page;
  const precedence = options.precedence ?? 'others';
  let roundTrip = 0;
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    if (attempt > 0) await clock.sleep(casRetryPause(attempt, roundTrip, precedence, options.random));
    const given = attempt === 0 ? options.first : undefined;
    const readStarted = clock.monotonic();
    const { record, revision } = given ?? (await page.read());
    // The caller's read was not timed: the write alone then stands for both halves of the round trip.
    const readMs = given === undefined ? clock.monotonic() - readStarted : undefined;
    const outcome = transition(record);
    const write = async (next: LockRecord, summary: string) => {
      const started = clock.monotonic();
      const result = await driver.compareAndSwap(key, revision, next, { summary });
      const writeMs = clock.monotonic() - started;
      roundTrip = (readMs ?? writeMs) + writeMs;
      return result;
    };
    if (!outcome.ok) {
      if (outcome.record) {
        const audited = await write(outcome.record, outcome.summary ?? 'refused');
        if (!audited.ok) continue;
        options.afterWrite?.({ record: outcome.record, revision: audited.revision });
      }
      throw outcome.error;
    }
    await options.beforeWrite?.(outcome.value);
    const written = await write(outcome.record, outcome.summary);
    if (written.ok) {
      options.afterWrite?.({ record: outcome.record, revision: written.revision });
      return outcome.value;
    }
  }
  throw new LockBackendError(driver.name, 'The lock record kept changing under this update; try again.');
}
