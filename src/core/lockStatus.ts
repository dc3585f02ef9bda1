import {
  isLive, mayAcquire, turnAt, type Block, type Caution, type ContainerSettings, type IdRange, type IdSpan, type LockRecord,
} from './lockRecord';

/**
 * What one person sees of the record: the badge state and the facts behind it. Derived, never
 * stored. `Offline` and `Not initialised` are added by the callers that know about backends.
 */
export enum LockState {
  Free = 'free',
  HeldByMe = 'held-by-me',
  HeldByOther = 'held-by-other',
  Queued = 'queued',
  YourTurn = 'your-turn',
  HolderSilent = 'holder-silent',
  Stale = 'stale',
}

export interface Viewer {
  readonly identity: string;
  /** The clone's local session, when it acquired before. */
  readonly session?: { readonly grant: number; readonly tokenHash: string };
}

export interface LockStatus {
  readonly state: LockState;
  readonly container: string;
  /** The current (last issued) grant. */
  readonly grant: number;
  readonly holder: { readonly identity: string; readonly grant: number; readonly grantedAt: number; readonly expiresAt: number } | null;
  /** Milliseconds until the holder's lease expires (negative once HOLDER SILENT). */
  readonly timeLeftMs: number | null;
  readonly queue: readonly { readonly identity: string; readonly at: number; readonly note?: string }[];
  /** 1-based position of the viewer in the queue; 0 when not queued. */
  readonly position: number;
  /** Whether the viewer may acquire right now. */
  readonly canAcquire: boolean;
  /** Whose handover window runs, and until when. */
  readonly turn: { readonly identity: string; readonly endsAt: number } | null;
  /** The viewer's local grant when it is below the current one. */
  readonly staleGrant: number | null;
  readonly ranges: readonly IdRange[];
  readonly blocks: readonly Block[];
  readonly nextId: number;
  /** Identifiers returned on release, leased again before new ones. */
  readonly pool: readonly IdSpan[];
  /** Set after HOLDER SILENT (a clear or a takeover) until the next holder's release after a push. */
  readonly caution: Caution | null;
}

export function describe(record: LockRecord, settings: ContainerSettings, viewer: Viewer, now: number): LockStatus {
  const h = record.holder;
  const live = isLive(h, now);
  const mine = h !== null && viewer.session !== undefined && viewer.session.tokenHash === h.tokenHash && viewer.session.grant === h.grant;
  const position = record.queue.findIndex(p => p.identity === viewer.identity) + 1;
  const canAcquire = mayAcquire(record, settings, viewer.identity, now);
  const turn = turnAt(record, settings, now).current ?? null;
  // A session whose grant is not the live holder's is stale: its pushes are fenced. That includes a
  // grant an operator cleared (no holder left, counter unchanged).
  const stale = viewer.session !== undefined && !(mine && live) && viewer.session.grant <= record.grant
    && (viewer.session.grant < record.grant || h === null || (h.grant === viewer.session.grant && !live));

  let state: LockState;
  if (stale) state = LockState.Stale;
  else if (live && mine) state = LockState.HeldByMe;
  else if (live) state = position > 0 ? LockState.Queued : LockState.HeldByOther;
  else if (position > 0 && canAcquire && turn !== null) state = LockState.YourTurn;
  else if (h !== null) state = LockState.HolderSilent;
  else if (position > 0 && !canAcquire) state = LockState.Queued;
  else state = LockState.Free;

  return {
    state,
    container: record.container,
    grant: record.grant,
    holder: h === null ? null : { identity: h.identity, grant: h.grant, grantedAt: h.grantedAt, expiresAt: h.expiresAt },
    timeLeftMs: h === null ? null : h.expiresAt - now,
    queue: record.queue,
    position,
    canAcquire,
    turn,
    staleGrant: stale ? viewer.session!.grant : null,
    ranges: record.ranges,
    blocks: record.blocks,
    nextId: record.nextId,
    pool: record.pool,
    caution: record.caution,
  };
}
