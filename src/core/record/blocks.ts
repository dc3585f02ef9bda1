import { cleanText } from '../safeText';
import { checkIdentity, checkKnown } from './identities';
import { done, type Outcome, refused } from './outcome';
import { type ContainerSettings, type HolderProof, type LockRecord, MAX_BLOCK_LENGTH } from './record';
import { holds, nextMove } from './turns';

/** Blocks of work (docs/protocol.md#the-record): the lead assigns them; the lead or the assignee marks them done. */

export function assign(
  record: LockRecord,
  proof: HolderProof,
  request: { to: string; text: string; newIdentity?: boolean },
  now: number,
  settings?: ContainerSettings,
): Outcome<{ index: number }> {
  if (!holds(record, proof.tokenHash, proof.grant, now)) {
    return refused({ reason: 'not-holder', what: 'assign', next: nextMove(record, settings, proof.identity, now) });
  }
  const invalid = checkIdentity(request.to) ?? checkKnown(record, request.to, request.newIdentity);
  if (invalid) return invalid;
  const text = cleanText(request.text, MAX_BLOCK_LENGTH);
  if (text === '') return refused({ reason: 'invalid-request', what: 'block-text' });
  const id = record.lastBlock + 1;
  const next: LockRecord = {
    ...record,
    lastBlock: id,
    blocks: [...record.blocks, { id, to: request.to, text, grant: record.grant, at: now }],
  };
  return done(
    next,
    { index: id },
    {
      at: now,
      who: proof.identity,
      action: 'assign',
      grant: record.grant,
      detail: `block ${id} to ${request.to}: ${text}`,
      to: request.to,
    },
  );
}

/**
 * Marks a block done: the lead (the live holder) or the block's assignee may. Blocks survive the
 * lead's release, a clear and a new grant until this removes them; the audit line keeps the text.
 */
export function markDone(
  record: LockRecord,
  request: { identity: string; block: number; holder?: HolderProof },
  now: number,
): Outcome<{ block: number; to: string }> {
  const block = record.blocks.find(b => b.id === request.block);
  if (block === undefined) {
    return refused({ reason: 'invalid-request', what: 'no-such-block', block: request.block });
  }
  const lead = request.holder !== undefined && holds(record, request.holder.tokenHash, request.holder.grant, now);
  if (!lead && block.to !== request.identity) {
    return refused({ reason: 'not-holder', what: 'done', block: block.id, assignee: block.to });
  }
  const next: LockRecord = { ...record, blocks: record.blocks.filter(b => b.id !== block.id) };
  return done(
    next,
    { block: block.id, to: block.to },
    {
      at: now,
      who: request.identity,
      action: 'done',
      grant: record.grant,
      detail: `block ${block.id} of ${block.to}: ${block.text}`,
      to: block.to,
    },
  );
}
