import { formatClock } from './format';
import {
  isLive,
  mayAcquire,
  nextStep,
  turnAt,
  type Block,
  type Caution,
  type ContainerSettings,
  type IdRange,
  type IdSpan,
  type LockRecord,
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

/** How this clone's grant stopped being live, when it did (a lapsed lease). */
export interface Lapse {
  readonly grant: number;
  /** expired: its lease ran out; superseded: a later grant was issued; cleared: by an operator; released: elsewhere. */
  readonly how: 'expired' | 'superseded' | 'cleared' | 'released';
  /** When, where the page says (epoch ms); superseded: when grant + 1, the grant that ended this one, was acquired. */
  readonly at: number | null;
  /** Who took over (grant + 1's holder), cleared or released, where the page says. */
  readonly by: string | null;
  /** The current grant. */
  readonly current: number;
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
  /** The viewer's local grant when it is no longer live (a lapsed lease), in every state. */
  readonly staleGrant: number | null;
  /** How the viewer's grant lapsed (the secondary line under the state); null when it did not. */
  readonly lapse: Lapse | null;
  /** What the viewer can do next, as advice that would not be refused now ("petition to join the queue (lockstep petition)"). */
  readonly next: string;
  readonly ranges: readonly IdRange[];
  readonly blocks: readonly Block[];
  readonly nextId: number;
  /** Identifiers returned on release, leased again before new ones. */
  readonly pool: readonly IdSpan[];
  /** Set after HOLDER SILENT (a clear or a takeover) until the next holder's release after a push. */
  readonly caution: Caution | null;
  /** The live holder is the viewer's identity, but not this clone's session (another clone, or a lost token). */
  readonly heldElsewhere: boolean;
}

export function describe(record: LockRecord, settings: ContainerSettings, viewer: Viewer, now: number): LockStatus {
  const h = record.holder;
  const live = isLive(h, now);
  const mine = h !== null && viewer.session !== undefined && viewer.session.tokenHash === h.tokenHash && viewer.session.grant === h.grant;
  const position = record.queue.findIndex(p => p.identity === viewer.identity) + 1;
  const canAcquire = mayAcquire(record, settings, viewer.identity, now);
  const turn = turnAt(record, settings, now).current ?? null;
  // A session whose grant is not the live holder's has lapsed: its pushes are fenced. That includes a
  // grant an operator cleared (no holder left, counter unchanged).
  const lapsed =
    viewer.session !== undefined &&
    !(mine && live) &&
    viewer.session.grant <= record.grant &&
    (viewer.session.grant < record.grant || h === null || (h.grant === viewer.session.grant && !live));

  // HOLDER SILENT is what everyone sees while a holder's lease has run out unreleased (seed 001's worked
  // example: "the badge shows HOLDER SILENT"), the queue head included: whether the viewer may take over
  // is in canAcquire and turn (hasTurn), not in the state.
  const silent = h !== null && !live;
  let state: LockState;
  if (live && mine) state = LockState.HeldByMe;
  else if (live) state = position > 0 ? LockState.Queued : LockState.HeldByOther;
  else if (silent) state = LockState.HolderSilent;
  else if (position > 0 && canAcquire && turn !== null) state = LockState.YourTurn;
  else if (position > 0 && !canAcquire) state = LockState.Queued;
  else state = LockState.Free;
  // A lapsed clone that waits in the queue, or whose turn it is, sees that like anyone else (the lapse
  // is the secondary line); otherwise it is stale.
  if (lapsed) {
    state =
      position > 0 && (!canAcquire || turn !== null)
        ? silent
          ? LockState.HolderSilent
          : !canAcquire
            ? LockState.Queued
            : LockState.YourTurn
        : LockState.Stale;
  }

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
    staleGrant: lapsed ? viewer.session!.grant : null,
    lapse: lapsed ? lapseOf(record, viewer.session!.grant, now) : null,
    next: live && mine ? 'push your work, then release (lockstep release --push)' : nextStep(record, settings, viewer.identity, now),
    ranges: record.ranges,
    blocks: record.blocks,
    nextId: record.nextId,
    pool: record.pool,
    caution: record.caution,
    heldElsewhere: live && !mine && h?.identity === viewer.identity,
  };
}

/**
 * Whether it is the viewer's turn: queued, and inside the handover windows that let it acquire now —
 * after a release (state your-turn) or over a silent holder (state holder-silent, "you may take over").
 */
export function hasTurn(status: LockStatus): boolean {
  return status.position > 0 && status.canAcquire && status.turn !== null;
}

function lapseOf(record: LockRecord, grant: number, now: number): Lapse {
  const h = record.holder;
  if (record.grant > grant) {
    const next = record.audit.find(l => l.action === 'acquire' && l.outcome === 'done' && l.grant === grant + 1);
    return { grant, how: 'superseded', at: next?.at ?? null, by: next?.who ?? null, current: record.grant };
  }
  if (h !== null && h.grant === grant && h.expiresAt <= now)
    return { grant, how: 'expired', at: h.expiresAt, by: null, current: record.grant };
  if (record.caution?.silentGrant === grant)
    return { grant, how: 'cleared', at: record.caution.since, by: record.caution.by, current: record.grant };
  const released = [...record.audit].reverse().find(l => l.action === 'release' && l.grant === grant);
  return { grant, how: 'released', at: released?.at ?? record.releasedAt, by: released?.who ?? null, current: record.grant };
}

/**
 * A superseded lease: the grant after it (its `by` and `at` are that grant's acquire, when the audit still has it), and
 * the latest one when more came since — never the latest grant's number beside the next one's taker.
 */
function supersededLine(lapse: Lapse, when: string): string {
  const ended = `your lease #${lapse.grant} has ended`;
  if (lapse.by === null && lapse.at === null) return `${ended}: grant #${lapse.current} has been issued since`;
  const next = `grant #${lapse.grant + 1} was issued${lapse.by === null ? '' : ` to ${lapse.by}`}${when}`;
  return lapse.current > lapse.grant + 1 ? `${ended}: ${next}; grant #${lapse.current} is the latest` : `${ended}: ${next}`;
}

/**
 * The lapse as one line true for the reader: "your lease #2 expired at 14:05 UTC; the work you did
 * under it is not pushed". `unpushed` is what the clone knows of its own work (undefined: not known).
 */
export function lapseLine(lapse: Lapse, unpushed?: boolean): string {
  const when = lapse.at === null ? '' : ` at ${formatClock(lapse.at)}`;
  const what =
    lapse.how === 'expired'
      ? `your lease #${lapse.grant} expired${when}`
      : lapse.how === 'superseded'
        ? supersededLine(lapse, when)
        : lapse.how === 'cleared'
          ? `your lease #${lapse.grant} was cleared${lapse.by ? ` by ${lapse.by}` : ''}${when}`
          : `your lease #${lapse.grant} was released${when}`;
  return unpushed === true ? `${what}; the work you did under it is not pushed` : what;
}
