import { MAX_RETRY_SLEEP_MS } from '../bounds';
import type { Clock } from '../clock';
import { LockBackendError } from '../errors';
import type { LockRecord, Outcome } from '../lockRecord';
import type { Driver } from '../stores/store';

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
}

/**
 * Read → pure transition → compare-and-swap against the revision read; on a lost race, again (at
 * most {@link MAX_CAS_ATTEMPTS} times, with a short random pause). A refusal that carries an audit
 * line (an operator's clear, a refused push) is written before it is reported.
 */
export async function swap<T>(
  page: SwapPage,
  clock: Clock,
  transition: (record: LockRecord) => Outcome<T>,
  options: SwapOptions<T> = {},
): Promise<T> {
  const { driver, key } = page;
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    const { record, revision } = attempt === 0 && options.first !== undefined ? options.first : await page.read();
    const outcome = transition(record);
    if (!outcome.ok) {
      if (outcome.record) {
        const audited = await driver.compareAndSwap(key, revision, outcome.record, { summary: outcome.summary ?? 'refused' });
        if (!audited.ok) continue;
        options.afterWrite?.({ record: outcome.record, revision: audited.revision });
      }
      throw outcome.error;
    }
    await options.beforeWrite?.(outcome.value);
    const written = await driver.compareAndSwap(key, revision, outcome.record, { summary: outcome.summary });
    if (written.ok) {
      options.afterWrite?.({ record: outcome.record, revision: written.revision });
      return outcome.value;
    }
    await clock.sleep(Math.random() * MAX_RETRY_SLEEP_MS);
  }
  throw new LockBackendError(driver.name, 'The lock record kept changing under this update; try again.');
}
