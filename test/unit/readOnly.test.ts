import * as assert from 'node:assert/strict';
import { formatClock } from '../../src/core/format';
import { petition, release } from '../../src/core/lockRecord';
import { describe as describeLock, LockState } from '../../src/core/lockStatus';
import { lockedByOthers, readOnlyReason } from '../../src/core/readOnly';
import { ANA, BEN, LEAD, SETTINGS, T0, acquireAs, at, fresh, ok, proofOf } from '../helpers/lockRecordFixture';

const session = (identity: string, grant: number) => ({ grant, tokenHash: proofOf(identity, grant).tokenHash });

describe('readOnly: when editors of the container are read-only', () => {
  const held = acquireAs(fresh(), LEAD, T0).record;
  const queued = ok(petition(ok(petition(held, { identity: ANA }, at(0, 1))).record, { identity: BEN }, at(0, 2))).record;
  const released = ok(release(queued, proofOf(LEAD, 1), at(1))).record;
  const cases = [
    { title: 'free', status: describeLock(fresh(), SETTINGS, { identity: ANA }, T0), readOnly: false },
    { title: 'held by me', status: describeLock(held, SETTINGS, { identity: LEAD, session: session(LEAD, 1) }, at(1)), readOnly: false },
    { title: 'held by another', status: describeLock(held, SETTINGS, { identity: ANA }, at(1)), readOnly: true },
    { title: 'my identity holding it in another clone', status: describeLock(held, SETTINGS, { identity: LEAD }, at(1)), readOnly: true },
    { title: 'queued while held', status: describeLock(queued, SETTINGS, { identity: BEN }, at(0, 30)), readOnly: true },
    { title: "another's handover window", status: describeLock(released, SETTINGS, { identity: BEN }, at(1, 1)), readOnly: true },
    { title: 'my turn', status: describeLock(released, SETTINGS, { identity: ANA }, at(1, 1)), readOnly: false },
    { title: 'a silent holder I may take over', status: describeLock(held, SETTINGS, { identity: ANA }, at(3)), readOnly: false },
    {
      title: "a silent holder during another's window",
      status: describeLock(queued, SETTINGS, { identity: BEN }, at(2, 1)),
      readOnly: true,
    },
  ];
  for (const c of cases) {
    it(`${c.title}: ${c.readOnly ? 'read-only' : 'writable'}`, () => assert.equal(lockedByOthers(c.status), c.readOnly));
  }
  it('an unknown status (offline, not read yet) never makes editors read-only', () => assert.equal(lockedByOthers(undefined), false));

  it('explains in one line who has it and for how long', () => {
    const status = describeLock(held, SETTINGS, { identity: ANA }, at(1));
    assert.equal(status.state, LockState.HeldByOther);
    // Clock times, not countdowns: a notification that stays up never says "4s more" long after.
    assert.equal(
      readOnlyReason(status, at(1)),
      `Read-only: ${LEAD} holds the lock (grant #1) until ${formatClock(status.holder!.expiresAt)} unless it heartbeats. Petition to take your turn.`,
    );
    const turn = describeLock(released, SETTINGS, { identity: BEN }, at(1, 1));
    assert.equal(
      readOnlyReason(turn, at(1, 1)),
      `Read-only: it is ${ANA}'s turn to take the lock, until ${formatClock(turn.turn!.endsAt)}. Petition to take yours.`,
    );
  });
});
