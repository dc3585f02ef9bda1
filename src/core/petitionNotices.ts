import { escapeControls } from './safeText';
import type { Petition } from './lockRecord';
import { LockState, type LockStatus } from './lockStatus';

/** A petition the holder has not been told of yet. */
export interface PetitionNotice {
  /** One per petition: grant, petitioner and when (a withdrawn and renewed petition is new). */
  readonly key: string;
  readonly petition: Petition;
  /** How many wait now, this one included. */
  readonly waiting: number;
}

/**
 * Which petitions the holder is told of: while the status says the lock is ours, every petition in
 * the queue whose key is not in `told`. Nothing while anyone else holds it (their own badge tells
 * them). Pure: the caller remembers what it told.
 */
export function petitionsToTell(status: LockStatus | undefined, told: ReadonlySet<string>): PetitionNotice[] {
  if (status?.state !== LockState.HeldByMe || status.holder === null) return [];
  const grant = status.holder.grant;
  return status.queue
    .map(petition => ({ key: `${grant}\u0000${petition.identity}\u0000${petition.at}`, petition, waiting: status.queue.length }))
    .filter(notice => !told.has(notice.key));
}

/** The words of the notification: who, their note, and how many wait. */
export function petitionMessage(notice: PetitionNotice): string {
  const note = notice.petition.note ? `: "${escapeControls(notice.petition.note)}"` : '';
  const others = notice.waiting - 1;
  return (
    `Lockstep: ${escapeControls(notice.petition.identity)} petitioned for the lock${note}.` +
    (others > 0 ? ` ${notice.waiting} are waiting.` : '') +
    ' Push and release when your work is in, and the queue moves on.'
  );
}
