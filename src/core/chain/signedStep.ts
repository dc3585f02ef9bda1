import type { ContainerSettings, LockRecord } from '../lockRecord';
import { checkRecordUpdate, type RecordUpdateContext } from './recordUpdate';

/**
 * Is one step of a signed lock page proven? A step is proven when git verified its commit's
 * signature against the allowed signers list taken from the protected branch, the principal that
 * list gives the key is the identity of the step's audit line, and the step is one legal transition
 * of the record before it — the same pure rule the server guard applies to a push
 * (recordUpdate.ts), judged at the line's own time. The reader and the server guard ask this alike.
 * Pure: what git said about the signature in, a verdict out (one sentence naming no secret).
 */

/**
 * What git says of a commit's signature: `%G?` (G good and trusted, N none, B bad, …) and the identity
 * it signs for — for SSH the principal the allowed signers list gives the key (`%GS`); for OpenPGP
 * (`kind`) the identity `openpgpSigners` gives its primary key, empty when it lists none
 * (openpgpSigners.ts `stepSignature`).
 */
export interface StepSignature {
  readonly status: string;
  readonly signer: string;
  readonly kind?: 'openpgp';
}

/** Why the signature does not prove `identity` acted (undefined when it does). */
export function checkSigner(signature: StepSignature, identity: string): string | undefined {
  if (signature.status === 'N') return 'its commit is not signed.';
  if (signature.kind === 'openpgp') return checkOpenpgpSigner(signature, identity);
  if (signature.status !== 'G') {
    return "its commit's signature does not verify against a key the allowed signers list holds (a key not listed, a bad signature, or a signature copied from another commit).";
  }
  if (signature.signer !== identity) {
    return `its commit is signed with the key the allowed signers list gives ${signature.signer}, but its audit line acts as ${identity}.`;
  }
  return undefined;
}

/**
 * An OpenPGP signature proves a step only when gpg calls it good by a key the reader's own keyring
 * trusts (`G`: the keyring holds only the listed keys, trusted by their listed fingerprints) and the
 * listing gives that key to the step's identity. `Y` (a key expired since) never proves one: gpg
 * judges expiry by the reader's clock, and the chain does not refuse a step dated before the one it
 * follows, so a stolen expired key could sign a back-dated step (docs/protocol.md). Nor do `X`, `R`,
 * `E`, `B` or `U`.
 */
function checkOpenpgpSigner(signature: StepSignature, identity: string): string | undefined {
  if (signature.status === 'Y') {
    return "its commit's OpenPGP signature is by a key that has expired: an expired key proves no step, whenever it signed (extend the key's expiry and land its export in openpgpKeys).";
  }
  if (signature.status !== 'G') {
    return "its commit's OpenPGP signature does not verify against a key openpgpSigners lists (a key not listed, revoked or expired, a bad signature, or a signature copied from another commit).";
  }
  if (signature.signer === '') return 'its commit is signed with an OpenPGP key openpgpSigners does not list.';
  if (signature.signer !== identity) {
    return `its commit is signed with the OpenPGP key openpgpSigners gives ${signature.signer}, but its audit line acts as ${identity}.`;
  }
  return undefined;
}

/**
 * Why the step from `before` (null: the page's creation) to `after` is not proven, or undefined.
 * `afterText` is the stored record.json, compared byte for byte with what the transition writes.
 */
export function checkSignedStep(
  before: LockRecord | null,
  after: LockRecord,
  afterText: string,
  signature: StepSignature,
  settings: ContainerSettings,
): string | undefined {
  const line = after.audit[after.audit.length - 1];
  if (line === undefined) return 'its record has no audit line, so it is no transition of the page.';
  const unsigned = checkSigner(signature, line.who);
  if (unsigned !== undefined) return unsigned;
  // Judged at the line's own time: a reader has no server clock, and the signature dates the line.
  return checkRecordUpdate(before, after, {
    settings,
    now: line.at,
    skewMs: 0,
    requireProof: false,
    pushed: {},
    afterText,
    pusher: signature.signer,
  });
}

/**
 * Why a compaction's snapshot is not proven: it keeps the record unchanged, so it must be signed by
 * the record's last actor (whose stamp it carries) or by an operator.
 */
export function checkSignedSnapshot(
  record: LockRecord,
  signature: StepSignature,
  settings: Pick<ContainerSettings, 'operators'>,
): string | undefined {
  const line = record.audit[record.audit.length - 1];
  if (line === undefined) return 'its record has no audit line to stamp a compaction with.';
  const asActor = checkSigner(signature, line.who);
  if (asActor === undefined) return undefined;
  if (signature.status === 'G' && settings.operators.includes(signature.signer)) return undefined;
  return `a compaction is signed by the record's last actor or by an operator; ${asActor}`;
}

/**
 * Why a new history pushed over a signed page (the server guard) is not an operator's repair: it
 * must be an adopt signed by its operator, legal by the server's clock, and it may not lower the
 * fence — its grant and next identifier at least the current record's (`before`; undefined when the
 * current record cannot be read, as a tampered one may not).
 */
export function checkSignedRestart(
  before: LockRecord | undefined,
  after: LockRecord,
  signature: StepSignature,
  context: RecordUpdateContext,
): string | undefined {
  const line = after.audit[after.audit.length - 1];
  if (line?.action !== 'adopt') return "a new history over the lock page is only an operator's signed lockstep adopt.";
  const unsigned = checkSigner(signature, line.who);
  if (unsigned !== undefined) return unsigned;
  const illegal = checkRecordUpdate(null, after, { ...context, pusher: signature.signer });
  if (illegal !== undefined) return illegal;
  if (before !== undefined && (after.grant < before.grant || after.nextId < before.nextId)) {
    return `an adopt over the page continues its fence: grant #${before.grant} or higher, and identifiers from ${before.nextId} or higher.`;
  }
  return undefined;
}
