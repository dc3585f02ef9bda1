import { SECOND } from '../clock';
import { formatClock } from '../format';
import type { ContainerSettings, LockRecord } from './record';
import type { Refusal } from './refusal';
import { type Lapse, lapseOf, type NextStep, nextMove } from './turns';

/**
 * The one place the record's refusals, lapses and next-step advice become words, as git keeps its
 * error codes apart from their text: the transitions decide and return facts ({@link Refusal},
 * {@link Lapse}, {@link NextStep}); these functions render them. Times read as local wall clock
 * ({@link formatClock}). Nothing here names a lock, a token or a backend key.
 */

/** A refusal's message: what was refused, why, and what to do. */
export function refusalText(refusal: Refusal): string {
  switch (refusal.reason) {
    case 'invalid-request':
      return invalidRequestText(refusal);
    case 'already-holder':
      return `You already hold the lock (grant #${refusal.grant}) in another clone or session; work there, or let that lease expire.`;
    case 'held-by-other':
      return `The lock is held by ${refusal.holder} (grant #${refusal.grant}) until ${formatClock(refusal.until)}. ${sentence(nextStepText(refusal.next))}`;
    case 'not-your-turn':
      return `It is ${refusal.turn ?? 'the queue head'}'s turn until ${formatClock(refusal.until)}. ${sentence(nextStepText(refusal.next))}`;
    case 'holder-cannot-petition':
      return 'You hold the lock; there is nothing to petition for.';
    case 'already-queued': {
      const next = refusal.next === undefined ? '' : ` ${sentence(nextStepText(refusal.next))}`;
      return `You are already in the queue at position ${refusal.position}.${next}`;
    }
    case 'not-queued':
      return 'You are not in the queue.';
    case 'not-holder':
      return notHolderText(refusal);
    case 'no-range':
      return 'You have no identifier range under the current grant; ask the lead to lease you one.';
    case 'range-exhausted':
      return 'Your identifier ranges are used up; ask the lead to lease you more.';
    case 'new-identity':
      return `${refusal.identity} has never appeared on this lock page. Check the spelling; if ${refusal.identity} is a new teammate, confirm with --new-identity.`;
    case 'not-operator':
      return refusal.what === 'clear'
        ? `Only an operator may clear the lock; ${refusal.identity} is not listed in .lockstep.json's operators.`
        : `Only an operator may adopt a lost lock page; ${refusal.identity} is not listed in .lockstep.json's operators.`;
    case 'reason-required':
      return refusal.what === 'clear'
        ? 'Say why the lock is cleared (--reason TEXT); it goes into the audit trail.'
        : 'Say why the page is adopted (--reason TEXT); it goes into the audit trail.';
    case 'not-silent':
      return refusal.holder === null
        ? 'The lock is free; there is nothing to clear.'
        : `The holder ${refusal.holder.identity} is live until ${formatClock(refusal.holder.until)}; only a HOLDER SILENT lock may be cleared.`;
  }
}

function notHolderText(refusal: Extract<Refusal, { reason: 'not-holder' }>): string {
  switch (refusal.what) {
    case 'lease-ids':
      return `Only the lead (the live holder) allocates identifiers. To become the lead: ${nextStepText(refusal.next)}.`;
    case 'assign':
      return `Only the lead (the live holder) assigns blocks. To become the lead: ${nextStepText(refusal.next)}.`;
    case 'done':
      return `Only the lead (the live holder) or ${refusal.assignee} may mark block ${refusal.block} done.`;
    case 'push':
      return `Push refused: ${refusal.detail}`;
  }
}

function invalidRequestText(refusal: Extract<Refusal, { reason: 'invalid-request' }>): string {
  switch (refusal.what) {
    case 'identity':
      return `An identity must be 1 to ${refusal.maxLength} printable characters, without control or text-direction characters (usually an e-mail address); check LOCKSTEP_IDENTITY, else git's user.email.`;
    case 'ttl':
      return `A lease lasts ${refusal.minMs / SECOND} to ${refusal.maxMs / SECOND} seconds; ask for a TTL in that range (acquire --ttl S), and heartbeat to keep a short one.`;
    case 'landed-commit':
      return 'The landed commit must be 7 to 64 lower-case hexadecimal digits.';
    case 'landing':
      return 'A landing names a branch and full commit ids (40 or 64 lower-case hexadecimal digits).';
    case 'id-count':
      return `The count must be a whole number from 1 to ${refusal.max}.`;
    case 'block-text':
      return 'Describe the block of work (--block TEXT).';
    case 'no-such-block':
      return `There is no open block ${refusal.block} on the lock page; \`lockstep status\` lists the open blocks.`;
    case 'adopt-floors':
      return 'The grant floor must be a whole number from 0 and the next identifier a whole number from 1.';
  }
}

/** A next step as advice in lower case, to follow a colon or to become a {@link sentence}. */
export function nextStepText(next: NextStep): string {
  switch (next.step) {
    case 'work-elsewhere':
      return `you hold the lock (grant #${next.grant}) in another clone or session: work there, or let that lease expire`;
    case 'see-status':
      return 'see `lockstep status` for your next step';
    case 'acquire':
      return 'acquire it now (lockstep acquire)';
    case 'wait':
      return `you are at position ${next.position} of ${next.of} in the queue: wait for your turn (lockstep wait)`;
    case 'petition':
      return 'petition to join the queue (lockstep petition)';
  }
}

/** Why a grant this person held is no longer live, in words true for them, and what to do next. */
export function lapseText(lapse: Lapse): string {
  const next = sentence(nextStepText(lapse.next));
  switch (lapse.why) {
    case 'superseded': {
      const h = lapse.holder;
      const to = h === null ? '' : h.you ? ' to you in another clone or session' : ` to ${h.identity}`;
      return `Your lease (grant #${lapse.grant}) has ended: grant #${lapse.current} was issued since${to}. ${next}`;
    }
    case 'expired':
      return `Your lease (grant #${lapse.grant}) expired at ${formatClock(lapse.at)}; a lapsed lease is never revived. ${next}`;
    case 'cleared':
      return `Your lease (grant #${lapse.grant}) has ended: ${lapse.by} cleared it at ${formatClock(lapse.at)}. ${next}`;
    case 'released':
      return `Your lease (grant #${lapse.grant}) has ended: it was released. ${next}`;
    case 'not-live':
      return `You do not hold the lock (grant #${lapse.grant} is not live). ${next}`;
  }
}

/**
 * What `identity` can do next about the lock, as advice that would not itself be refused now:
 * acquire when it may, wait when it is queued, petition otherwise (docs/protocol.md#transitions).
 */
export function nextStep(record: LockRecord, settings: ContainerSettings | undefined, identity: string, now: number): string {
  return nextStepText(nextMove(record, settings, identity, now));
}

/** Why a grant this person held is no longer live, in words true for them, and what to do next. */
export function lapseMessage(
  record: LockRecord,
  settings: ContainerSettings | undefined,
  identity: string,
  grant: number,
  now: number,
): string {
  return lapseText(lapseOf(record, settings, identity, grant, now));
}

function sentence(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}
