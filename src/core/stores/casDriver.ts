import { LockBackendError, LockStorageError } from '../errors';
import { claimTransition, extendTransition, isLeaseState, releaseTransition, type LeaseState, type Transition } from './leaseState';
import { nextTurn, RefusalPacing, type PacingOptions } from './refusalPacing';
import { isLeaseSlot, leaseInSlot, slotOf, slotWithLease, type LeaseSlot } from './leaseSlots';
import type { DriverName } from '../config';
import { packedJson, unpackPage } from './packedPage';
import { SerializedJson } from './serializedJson';
import type { CasMeta, CasResult, ClaimResult, Driver, ReleaseResult, VersionedRecord, Watch, WatchOptions } from './store';

/**
 * The one primitive a simple backend has to offer: versioned cells written only against the
 * revision they were read at. Memory and file drivers implement this; {@link CasDriver} builds both
 * of a driver's primitives (plain leases and container records) on top of it.
 */
export interface CasCells {
  get(cell: string): Promise<VersionedRecord | null>;
  /**
   * `value`: a lease's state, or a container record's stored form as a {@link SerializedJson} (its text made
   * once, packedPage.ts): cells store `jsonText(value)` (serializedJson.ts).
   */
  put(cell: string, expectedRevision: string | null, value: unknown): Promise<CasResult>;
  /**
   * Optional and free of I/O: the last record this instance read or wrote for `cell`, which may be
   * out of date. {@link CasDriver} uses it only to attempt a write, which the compare-and-swap then
   * validates; never to answer without writing.
   */
  peek?(cell: string): VersionedRecord | undefined;
  watch?(cell: string, onChange: () => void, options?: WatchOptions): Watch;
  close(): Promise<void>;
}

/** How often a lease operation re-reads after losing a compare-and-swap race before giving up. */
const MAX_CAS_ROUNDS = 1000;

export interface CasDriverOptions {
  /**
   * Keep plain leases in this many slot cells (see leaseSlots.ts) rather than one cell per key, so
   * that the cells a store keeps are bounded whatever the number of distinct names.
   */
  readonly leaseSlots?: number;
  /**
   * The cells do their I/O synchronously: let the process's pending I/O run before each operation
   * resolves, and pace clients that retry a refused claim in a tight loop (refusalPacing.ts), so
   * that they cannot starve others in the same process.
   */
  readonly yieldToIo?: boolean;
  /** The pacing's clock and durations (tests inject them). */
  readonly pacing?: PacingOptions;
}

export class CasDriver implements Driver {
  readonly watch?: (key: string, onChange: () => void, options?: WatchOptions) => Watch;
  /** Private, so that printing a driver shows no stored state (owner hashes, paths of leases). */
  readonly #cells: CasCells;
  /** Set for cells with synchronous I/O (options.yieldToIo). */
  readonly #pacing: RefusalPacing | undefined;

  constructor(
    readonly name: DriverName,
    readonly distributed: boolean,
    cells: CasCells,
    private readonly options: CasDriverOptions = {},
  ) {
    this.#cells = cells;
    this.#pacing = options.yieldToIo ? new RefusalPacing(options.pacing) : undefined;
    if (cells.watch) {
      const watchCell = cells.watch.bind(cells);
      this.watch = (key, onChange, options) => watchCell(recordCell(key), onChange, options);
    }
  }

  async claim(key: string, ownerHash: string, ttlMs: number, now: number): Promise<ClaimResult> {
    const pacing = this.#pacing;
    if (pacing === undefined) return this.updateLease(key, now, state => claimTransition(state, ownerHash, ttlMs, now), { claimed: false });
    let result: ClaimResult;
    try {
      result = await this.unsettledLease(key, now, state => claimTransition(state, ownerHash, ttlMs, now), { claimed: false });
    } catch (error) {
      await nextTurn();
      throw error;
    }
    if (result.claimed) {
      pacing.claimed(key);
      await nextTurn();
    } else {
      await pacing.refused(key);
    }
    return result;
  }

  extend(key: string, ownerHash: string, ttlMs: number, now: number): Promise<boolean> {
    return this.updateLease(key, now, state => extendTransition(state, ownerHash, ttlMs, now), undefined);
  }

  async release(key: string, ownerHash: string, now: number): Promise<ReleaseResult> {
    const pacing = this.#pacing;
    if (pacing === undefined) return this.updateLease(key, now, state => releaseTransition(state, ownerHash, now), undefined);
    try {
      const result = await this.unsettledLease(key, now, state => releaseTransition(state, ownerHash, now), undefined);
      if (result === 'released') pacing.released(key);
      return result;
    } finally {
      await nextTurn();
    }
  }

  /** The container record, unpacked when large (packedPage.ts). */
  async read(key: string): Promise<VersionedRecord | null> {
    const stored = await this.settled(this.#cells.get(recordCell(key)));
    return stored === null ? null : { value: unpackPage(stored.value, this.name), revision: stored.revision };
  }

  async compareAndSwap(key: string, expectedRevision: string | null, next: unknown, _meta: CasMeta): Promise<CasResult> {
    const text = packedJson(next, this.name);
    return this.settled(this.#cells.put(recordCell(key), expectedRevision, text === undefined ? next : new SerializedJson(text)));
  }

  /** The operation's outcome, after one turn of the event loop when the cells asked for it. */
  private async settled<T>(operation: Promise<T>): Promise<T> {
    if (!this.options.yieldToIo) return operation;
    try {
      return await operation;
    } finally {
      await nextTurn();
    }
  }

  close(): Promise<void> {
    return this.#cells.close();
  }

  /**
   * Read, apply a pure transition, write against the revision read; on a lost race, read again.
   * `onContention` is what a claim answers when others keep winning (the caller's wait loop retries);
   * for extend and release there is no such answer and persistent contention is a backend fault.
   */
  private updateLease<R>(
    key: string,
    now: number,
    transition: (s: LeaseState | null) => Transition<R>,
    onContention: R | undefined,
  ): Promise<R> {
    return this.settled(this.unsettledLease(key, now, transition, onContention));
  }

  /** {@link updateLease} without the turn of the event loop after it. */
  private unsettledLease<R>(
    key: string,
    now: number,
    transition: (s: LeaseState | null) => Transition<R>,
    onContention: R | undefined,
  ): Promise<R> {
    const slots = this.options.leaseSlots;
    if (slots === undefined) return this.updateCell(leaseCell(key), isLeaseState, transition, onContention);
    // In a slot: the key's lease is read out of the slot, and the transition's result written back into it.
    return this.updateCell(
      slotCell(slotOf(key, slots)),
      isLeaseSlot,
      (slot: LeaseSlot | null) => {
        const { next, result } = transition(leaseInSlot(slot, key));
        return { next: next === undefined ? undefined : slotWithLease(slot, key, next, now), result };
      },
      onContention,
    );
  }

  private async updateCell<S, R>(
    cell: string,
    isState: (value: unknown) => value is S,
    transition: (s: S | null) => { next: S | undefined; result: R },
    onContention: R | undefined,
  ): Promise<R> {
    // Speculate on the state this instance saw last (often its own previous write, e.g. a release
    // right after the claim): if the transition writes and the compare-and-swap succeeds, that state
    // was current when the write took effect, so the result is right. Otherwise read for real.
    const known = this.#cells.peek?.(cell);
    if (known !== undefined && isState(known.value)) {
      const { next, result } = transition(known.value);
      if (next !== undefined && (await this.#cells.put(cell, known.revision, next)).ok) return result;
    }
    for (let round = 0; round < MAX_CAS_ROUNDS; round++) {
      const current = await this.#cells.get(cell);
      if (current !== null && !isState(current.value)) {
        throw new LockStorageError(
          this.name,
          'A stored lease record is damaged, so the lease cannot be treated as free. Stop the processes using this namespace and remove its storage, or restore it from a backup.',
        );
      }
      const { next, result } = transition(current === null ? null : (current.value as S));
      if (next === undefined) return result;
      const written = await this.#cells.put(cell, current?.revision ?? null, next);
      if (written.ok) return result;
      if (onContention !== undefined && round >= 8) return onContention;
    }
    throw new LockBackendError(this.name, 'The lease could not be updated: other processes kept changing it. Try again.');
  }
}

function leaseCell(key: string): string {
  return `l${key}`;
}
function recordCell(key: string): string {
  return `r${key}`;
}
function slotCell(slot: number): string {
  return `s${slot.toString(16).padStart(2, '0')}`;
}
