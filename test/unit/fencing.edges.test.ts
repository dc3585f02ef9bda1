import * as assert from 'node:assert/strict';
import { fenceClientPush, fenceServerPush } from '../../src/core/fencing';
import { acquire, type LockRecord } from '../../src/core/lockRecord';
import { hashProof, hashToken, pushProof } from '../../src/core/tokens';
import { at, CONTAINER, fresh, ok, SETTINGS } from '../helpers/lockRecordFixture';

/** Fencing verdicts at the edges a worked example does not reach (found by mutation testing, docs/mutation.md). */
const ALICE = 'alice@example.com';
const tokenFor = (grant: number): string => Buffer.from(`${ALICE}#${grant}`.padEnd(32, '.').slice(0, 32)).toString('hex');

function acquired(record: LockRecord, now: number) {
  const grant = record.grant + 1;
  const token = tokenFor(grant);
  const proof = pushProof(token, CONTAINER, grant);
  return {
    record: ok(acquire(record, SETTINGS, { identity: ALICE, tokenHash: hashToken(token), proofHash: hashProof(proof) }, now)).record,
    grant,
    token,
    proof,
  };
}

describe('fencing: edges of the client verdict', () => {
  it("no session on a free lock, or while the holder's lease has run out: no holder is named", () => {
    const free = fenceClientPush(fresh(), undefined, at(0));
    assert.equal(
      free?.message,
      'This clone does not hold the lock, and pushes to protected branches need it. To hold it: see `lockstep status` for your next step.',
    );
    const lapsed = acquired(fresh(), at(0));
    const message = fenceClientPush(lapsed.record, undefined, at(5))?.message ?? '';
    assert.match(message, /^This clone does not hold the lock, and pushes/);
    assert.doesNotMatch(message, /Stryker|held by/);
  });
  it('a session of the current grant after its release is "no longer held" (not an exception)', () => {
    const held = acquired(fresh(), at(0));
    const released = { ...held.record, holder: null };
    assert.match(fenceClientPush(released, { grant: held.grant, token: held.token }, at(1))?.message ?? '', /is no longer held/);
  });
  it('a grant that has ended with nobody holding now names no holder', () => {
    const first = acquired(fresh(), at(0));
    const second = acquired(first.record, at(3));
    const message = fenceClientPush({ ...second.record, holder: null }, { grant: first.grant, token: first.token }, at(4))?.message ?? '';
    assert.match(message, /^Your grant #1 has ended; the current grant is #2\. Your commits stay/);
  });
  it("a session claiming a grant above the holder's, with the holder's own token, is refused: the grant must match too", () => {
    const held = acquired(fresh(), at(0));
    assert.match(
      fenceClientPush(held.record, { grant: held.grant + 1, token: held.token }, at(1))?.message ?? '',
      /Your grant #2 is no longer held/,
    );
  });
});

describe('fencing: edges of the server verdict', () => {
  it('a proof for a grant above the record\'s (never issued) with nobody holding is not valid, not "no longer held"', () => {
    const held = acquired(fresh(), at(0));
    const record = { ...held.record, holder: null };
    const message = fenceServerPush(record, { grant: held.grant + 1, proof: held.proof }, at(1))?.message ?? '';
    assert.match(message, /is not valid for the current grant #1/);
  });
});
