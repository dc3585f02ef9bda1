import { formatClock } from '../format';
import * as protocol from '../lockRecord';
import type { ContainerSettings, LockRecord } from '../lockRecord';
import { encodeRecord } from '../recordCodec';
import { digestOf, type ChainStep } from './signedChain';
import { checkSignedStep, type StepSignature } from './signedStep';

/**
 * Heartbeats coalesce in a signed chain (docs/protocol.md#signed-chains): a heartbeat by the holder
 * written right after a heartbeat of the same grant by the same holder replaces that step instead of
 * following it. The replacing step continues the same record before (its `p`) and lists the times
 * of every heartbeat it stands for (`h`, signed with it); a reader replays them one by one with the
 * very transition and rule the server guard applies to a heartbeat (each renews only a live lease,
 * judged at its own time) and the result must be the step's record byte for byte. So a whole hold's
 * heartbeats take one step, and what is lost is only the intermediate records and their own
 * signatures — never a renewal's time or its legality. A reader whose witness was one of the
 * replaced heartbeats finds it among the replayed records (and nothing else passes for it). Pure.
 */

/** A coalesced step stands for at most this many heartbeats; the next one starts a new step. */
export const MAX_RENEWALS_PER_STEP = 256;

interface Line {
  readonly at: number;
  readonly who: string;
  readonly action: string;
  readonly grant: number;
  readonly outcome: string;
}

/** The last audit line of a record's text, when it is a heartbeat done; undefined otherwise. */
function lastHeartbeat(text: string): Line | undefined {
  try {
    const line = (JSON.parse(text) as { audit?: Line[] }).audit?.at(-1);
    return line?.action === 'heartbeat' && line.outcome === 'done' ? line : undefined;
  } catch {
    return undefined;
  }
}

/**
 * When the record `next` (its text) may replace the chain's newest step: both are heartbeats of
 * one grant by one holder, the newest step's record before is in the window (it is not the
 * checkpoint), and the run stays within {@link MAX_RENEWALS_PER_STEP}. Then the step to write
 * continues `p` and stands for the heartbeats at `h`.
 */
export function coalescedStep(steps: readonly ChainStep[], next: string): { p: string; h: number[] } | undefined {
  const tip = steps.at(-1);
  if (tip === undefined || steps.length < 2 || tip.p === null || tip.p !== digestOf(steps[steps.length - 2].r)) return undefined;
  const was = lastHeartbeat(tip.r);
  const now = lastHeartbeat(next);
  if (was === undefined || now === undefined || was.who !== now.who || was.grant !== now.grant) return undefined;
  const h = [...(tip.h ?? [was.at]), now.at];
  if (h.length > MAX_RENEWALS_PER_STEP || !(now.at > h[h.length - 2])) return undefined;
  return { p: tip.p, h };
}

/**
 * The records a coalesced step's heartbeats make from `before`, one per time in `h` (the last is the
 * step's own), each with why it is not a legal heartbeat by the signer (undefined when it is).
 */
export function replayRenewals(
  before: LockRecord,
  h: readonly number[],
  signature: StepSignature,
  settings: ContainerSettings,
): { readonly text: string; readonly why: string | undefined }[] {
  const out: { text: string; why: string | undefined }[] = [];
  const holder = before.holder;
  let record = before;
  for (const [i, at] of h.entries()) {
    const when = `its heartbeat at ${formatClock(at)} (${i + 1} of ${h.length})`;
    if (holder === null) return [...out, { text: '', why: `${when} renews no lease: the record before has no holder.` }];
    if (i > 0 && !(at > h[i - 1])) return [...out, { text: '', why: `${when} is not later than the one before it.` }];
    const beat = protocol.heartbeat(record, settings, { identity: holder.identity, tokenHash: holder.tokenHash, grant: holder.grant }, at);
    if (!beat.ok) return [...out, { text: '', why: `${when} renews a lease that is not live (grant #${holder.grant}).` }];
    const text = encodeRecord(beat.record);
    const illegal = checkSignedStep(record, beat.record, text, signature, settings);
    if (illegal !== undefined) return [...out, { text, why: `${when}: ${illegal}` }];
    out.push({ text, why: undefined });
    record = beat.record;
  }
  return out;
}

/** Why a coalesced step (record `afterText`, heartbeats at `h`) is not proven from `before`, or undefined. */
export function checkRenewals(
  before: LockRecord,
  afterText: string,
  h: readonly number[],
  signature: StepSignature,
  settings: ContainerSettings,
): string | undefined {
  if (h.length < 2 || h.length > MAX_RENEWALS_PER_STEP)
    return `a coalesced step stands for 2 to ${MAX_RENEWALS_PER_STEP} heartbeats; this one lists ${h.length}.`;
  const replayed = replayRenewals(before, h, signature, settings);
  const failed = replayed.find(r => r.why !== undefined);
  if (failed !== undefined) return failed.why;
  if (replayed[replayed.length - 1].text !== afterText)
    return `it is not the record ${h.length} heartbeats at the times it lists make from the record before it.`;
  return undefined;
}

/**
 * Whether a reader's witness (its digest) is one of the heartbeats a coalesced step replaced: one
 * of the records its replay makes before its own (only a heartbeat of the step's grant by its
 * holder, continuing the same record before, can be).
 */
export function witnessedInRun(before: LockRecord, h: readonly number[], witness: string, settings: ContainerSettings): boolean {
  const holder = before.holder;
  if (holder === null) return false;
  // The signer is not judged here (the step itself is, in full): only where the witness stands.
  const replayed = replayRenewals(before, h, { status: 'G', signer: holder.identity }, settings);
  return replayed.slice(0, -1).some(r => r.why === undefined && digestOf(r.text) === witness);
}
