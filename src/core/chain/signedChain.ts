import { createHash } from 'node:crypto';
import type { AuditLine, ContainerSettings, LockRecord } from '../lockRecord';
import { MAX_CHAIN_STEPS } from './chainLayout';
import { checkRenewals, witnessedInRun } from './heartbeatRenewals';
import { checkSignedSnapshot, checkSignedStep, type StepSignature } from './signedStep';

/**
 * The signed chain of a lock page on a store every participant can write (file, SQL, Redis with
 * `allowedSigners`): the stored value keeps, beside the record, the newest signed transitions, and
 * a reader believes the record only when the chain proves it (docs/protocol.md#signed-chains).
 *
 * Each step is the record after a transition (`r`, its exact bytes; stored as a delta against the
 * step before, chainLayout.ts), the digest of the record before it (`p`; null for the page's creation
 * or an operator's adopt) and its actor's signature over {@link stepMessage} (SSH, or OpenPGP where the container lists openpgpSigners). The chain is written in the same compare-and-swap as the record (it is
 * part of the one stored value), so no writer can move one without the other. A step is proven when
 * it continues the step before it (its `p` is that step's digest), its signature is by the key the
 * allowed signers list gives its audit line's identity, and it is one legal transition of the record
 * before it: the same rule as a git driver's commit (signedStep.ts).
 *
 * A reader keeps a witness: the last record it proved (its digest and bytes). A chain must extend it:
 * hold it (or begin right after it, or hold a coalesced heartbeat step whose replay passes through it:
 * heartbeatRenewals.ts), or restart with an operator's adopt dated after it. A store set
 * back past the witnessed step — a dropped step — reads tampered for that reader, and so, failing
 * closed, does a window that no longer reaches back to it. Pure: signatures are judged by the caller (ssh-keygen or gpg), verdicts out.
 */

/** One signed transition, whole (its stored layout: chainLayout.ts). */
export interface ChainStep {
  /** Digest of the record before (sha256 hex of its stored bytes); null for the page's creation or an adopt. */
  readonly p: string | null;
  /** The record after, its stored bytes (JSON text). */
  readonly r: string;
  /** The actor's signature, armored (ssh-keygen -Y sign, or gpg --detach-sign: openpgpStepSignatures.ts); '' when unsigned. */
  readonly s: string;
  /** The times of the heartbeats a coalesced step stands for (heartbeatRenewals.ts); absent for one transition. */
  readonly h?: readonly number[];
}

/** What a reader proved last: the record's digest and bytes. */
export interface Witness {
  readonly digest: string;
  readonly text: string;
}

/** The namespace of a step's signature (ssh-keygen -n): a signature made for anything else never verifies here. */
export const STEP_NAMESPACE = 'lockstep-step';

export function digestOf(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The exact bytes a step's signature covers: the page's key, the record before (digest), the times
 * of the heartbeats a coalesced step stands for (when it is one), and the record after.
 */
export function stepMessage(key: string, p: string | null, r: string, h?: readonly number[]): string {
  return `lockstep-step v1\nkey ${key}\nbefore ${p ?? 'none'}\n${h === undefined ? '' : `renewed ${h.join(',')}\n`}${r}`;
}

/** A step as the verifier judges it: parsed, with what ssh-keygen or gpg said of its signature. */
export interface JudgedStep {
  readonly step: ChainStep;
  readonly digest: string;
  /** The parsed record; undefined when `r` is no valid record of this container. */
  readonly record: LockRecord | undefined;
  readonly signature: StepSignature;
}

export type ChainVerdict =
  | { readonly ok: true; readonly head: Witness }
  | { readonly ok: false; readonly step: string; readonly why: string };

/**
 * Is the chain proven for a reader whose last proven record is `witness` (undefined: a reader with
 * none, as a fresh clone or a CI check)? `before` parses the witness's record. Steps oldest first.
 */
export function checkChain(
  steps: readonly JudgedStep[],
  witness: (Witness & { record: LockRecord | undefined }) | undefined,
  settings: ContainerSettings,
): ChainVerdict {
  const refuse = (s: JudgedStep, why: string): ChainVerdict => ({ ok: false, step: s.digest, why });
  // Records are read only where needed (a caller may parse them lazily): the links first, then each step judged.
  const invalid = 'its record is not a valid lock record of this container.';
  for (const [i, s] of steps.entries()) {
    if (i > 0 && s.step.p !== steps[i - 1].digest)
      return refuse(s, 'it does not continue the step before it (a step was removed, replaced or replayed).');
  }
  const tip = steps[steps.length - 1];
  if (tip.record === undefined) return refuse(tip, invalid);
  let start = 0;
  let before: LockRecord | null | undefined; // undefined: the window's first step starts the proof
  if (witness !== undefined) {
    const at = provenThrough(steps, witness.digest, settings);
    if (at >= 0) {
      start = at + 1;
      before = steps[at].record;
      if (before === undefined) return refuse(steps[at], invalid);
    } else if (steps[0].step.p === witness.digest && witness.record !== undefined) {
      before = witness.record;
    } else if (!restartsOver(steps[0], witness.record)) {
      // Fail closed: a window that does not reach back to the witness cannot show that nothing was
      // dropped, and its first step (a checkpoint only its own actor signed) could be anyone's invention.
      const lost = droppedWitness(tip.record as LockRecord, witness.record);
      const after = witness.record?.audit.at(-1)?.at ?? 0;
      const first = steps.find(s => (s.record?.audit.at(-1)?.at ?? 0) > after) ?? tip;
      return refuse(
        first,
        lost ??
          `the page's signed steps no longer reach back to the step this reader proved last (more than ${MAX_CHAIN_STEPS} steps since, or a window written anew), so they cannot show that nothing was dropped.`,
      );
    }
  }
  for (let i = start; i < steps.length; i++) {
    const s = steps[i];
    const record = s.record;
    if (record === undefined) return refuse(s, invalid);
    let why: string | undefined;
    if (i === start && before === undefined) {
      // The window's first step: the page's creation (or an adopt), or a step whose record before has
      // left the window, accepted as a checkpoint when signed by its own actor or an operator.
      why =
        s.step.p === null
          ? checkSignedStep(null, record, s.step.r, s.signature, settings)
          : checkSignedSnapshot(record, s.signature, settings);
    } else if (s.step.p === null) {
      why = "it starts a new history over the page, which only an operator's signed lockstep adopt may, and only over a tampered page.";
      if (record.audit.at(-1)?.action === 'adopt') why = checkSignedStep(null, record, s.step.r, s.signature, settings);
    } else if (s.step.h !== undefined) {
      why =
        before === undefined || before === null
          ? 'it stands for heartbeats of a record before it that the page does not hold.'
          : checkRenewals(before, s.step.r, s.step.h, s.signature, settings);
    } else {
      why = checkSignedStep(before ?? null, record, s.step.r, s.signature, settings);
    }
    if (why !== undefined) return refuse(s, why);
    before = record;
  }
  return { ok: true, head: { digest: tip.digest, text: tip.step.r } };
}

/**
 * The index of the newest step a reader whose witness is `witness` (a digest) proved before: the
 * witnessed step itself, or — when the witness was a heartbeat that a later heartbeat of the same
 * grant by the same holder replaced (heartbeatRenewals.ts) — the step before the coalesced step
 * whose replay passes through it. -1 when the window holds neither.
 */
export function provenThrough(
  steps: readonly Pick<JudgedStep, 'step' | 'digest' | 'record'>[],
  witness: string,
  settings: ContainerSettings,
): number {
  const at = steps.findIndex(s => s.digest === witness);
  if (at >= 0) return at;
  for (let i = steps.length - 1; i >= 1; i--) {
    const { step } = steps[i];
    const before = steps[i - 1].record;
    if (step.h !== undefined && step.p === steps[i - 1].digest && before !== undefined && witnessedInRun(before, step.h, witness, settings))
      return i - 1;
  }
  return -1;
}

/**
 * Whether the window's first step is an operator's adopt that restarted the chain over the witnessed
 * page (the repair of a tampered page): dated after the witnessed step, keeping its fence. It is then
 * judged as a creation; an older one is a store set back (a replay), judged as a dropped witness.
 */
function restartsOver(first: JudgedStep, seen: LockRecord | undefined): boolean {
  const adopt = first.record;
  const line = adopt?.audit.at(-1);
  if (first.step.p !== null || adopt === undefined || line?.action !== 'adopt' || seen === undefined) return false;
  return line.at > (seen.audit.at(-1)?.at ?? 0) && adopt.grant >= seen.grant && adopt.nextId >= seen.nextId;
}

/**
 * Why a chain that no longer holds the witnessed record was set back past it, when that shows: a
 * lower grant, or a newest record whose audit lacks the witnessed step's own line (and has not
 * trimmed lines that old). Undefined when it does not show (the window merely moved on, or was
 * written anew with the line copied).
 */
function droppedWitness(tip: LockRecord, witnessed: LockRecord | undefined): string | undefined {
  const line = witnessed?.audit.at(-1);
  if (witnessed === undefined || line === undefined)
    return 'the page does not extend the step this reader proved last, and that step cannot be read back.';
  const gone = `the page no longer holds the step this reader proved last (${line.action} by ${line.who}, grant #${line.grant}): the store was set back past it`;
  if (tip.grant < witnessed.grant) return `${gone} (its grant went down).`;
  if (tip.audit.some(l => sameLine(l, line))) return undefined;
  const oldest = tip.audit.find(l => l.outcome !== 'refused');
  if (oldest !== undefined && oldest.at > line.at) return undefined; // trimmed from the bounded audit since
  return `${gone} and written again.`;
}

function sameLine(a: AuditLine, b: AuditLine): boolean {
  return (
    a.at === b.at && a.who === b.who && a.action === b.action && a.grant === b.grant && a.outcome === b.outcome && a.detail === b.detail
  );
}
