import { cleanText } from '../safeText';
import { checkIdentity } from './identities';
import { done, type Outcome, refused } from './outcome';
import { type ContainerSettings, emptyRecord, type LockRecord, MAX_NOTE_LENGTH } from './record';

/**
 * Creates the container's page (`lockstep init`): the one record every clone reads. The caller
 * stores it only where no record exists (a compare-and-swap against "no record").
 */
export function createPage(container: string, request: { identity: string }, now: number): Outcome<{ container: string }> {
  const invalid = checkIdentity(request.identity);
  if (invalid) return invalid;
  return done(emptyRecord(container), { container }, { at: now, who: request.identity, action: 'init', grant: 0 });
}

/**
 * Recreates a lost page (an operator, with a reason): grants continue above `grantFloor` and
 * identifiers above `nextIdFloor`, so that no fence accepts an old grant and no identifier minted
 * on the lost page is handed out again. Like {@link createPage}, stored only where no record exists.
 */
export function adoptPage(
  container: string,
  settings: ContainerSettings,
  request: { identity: string; reason: string; grantFloor: number; nextIdFloor: number },
  now: number,
): Outcome<{ container: string; grant: number; nextId: number }> {
  const invalid = checkIdentity(request.identity);
  if (invalid) return invalid;
  if (!settings.operators.includes(request.identity)) {
    return refused({ reason: 'not-operator', what: 'adopt', identity: request.identity });
  }
  const reason = cleanText(request.reason, MAX_NOTE_LENGTH);
  if (reason === '') return refused({ reason: 'reason-required', what: 'adopt' });
  const { grantFloor, nextIdFloor } = request;
  if (!Number.isSafeInteger(grantFloor) || grantFloor < 0 || !Number.isSafeInteger(nextIdFloor) || nextIdFloor < 1) {
    return refused({ reason: 'invalid-request', what: 'adopt-floors' });
  }
  const record: LockRecord = { ...emptyRecord(container), grant: grantFloor, nextId: nextIdFloor };
  return done(
    record,
    { container, grant: grantFloor, nextId: nextIdFloor },
    {
      at: now,
      who: request.identity,
      action: 'adopt',
      grant: grantFloor,
      detail: `grants continue after #${grantFloor}, identifiers from ${nextIdFloor}: ${reason}`,
    },
  );
}
