import * as assert from 'node:assert/strict';
import { needsAfterRead, strandedGrant, unsettledAfterKill, type PageView } from '../../chaos/checkSettle';

const T = 'a'.repeat(64);
const U = 'b'.repeat(64);
const holder = (grant: number, tokenHash: string, expiresAt = 10_000) => ({ grant, tokenHash, expiresAt });
const page = (grant: number, h: PageView['holder'], audit: PageView['audit'] = []): PageView => ({ grant, holder: h, audit });

describe('chaos: stranded grants and what the next command settles', () => {
  it('a live holder whose token no clone holds, still the holder on the second read, is stranded', () => {
    assert.equal(strandedGrant(holder(7, T), 5_000, new Set([U]), holder(7, T)), 7);
  });

  it('is not stranded when a clone holds the token, when it is not live, or when the page moved on meanwhile', () => {
    assert.equal(strandedGrant(holder(7, T), 5_000, new Set([T]), holder(7, T)), undefined);
    assert.equal(strandedGrant(holder(7, T, 5_000), 5_000, new Set(), holder(7, T, 5_000)), undefined); // expired at the first read
    assert.equal(strandedGrant(null, 5_000, new Set(), null), undefined);
    assert.equal(strandedGrant(holder(7, T), 5_000, new Set(), null), undefined); // released meanwhile
    assert.equal(strandedGrant(holder(7, T), 5_000, new Set(), holder(8, U)), undefined); // the next grant
    assert.equal(strandedGrant(holder(7, T), 5_000, new Set(), holder(7, U)), undefined);
  });

  it('is not stranded when the lease lapsed by the second read (its session may then be forgotten on purpose)', () => {
    assert.equal(strandedGrant(holder(7, T, 6_000), 5_000, new Set(), holder(7, T, 6_000), 6_000), undefined);
    assert.equal(strandedGrant(holder(7, T, 6_000), 5_000, new Set(), holder(7, T, 6_000), 5_999), 7);
  });

  it('a heartbeat between the reads (a later expiry) is still the same holder', () => {
    assert.equal(strandedGrant(holder(7, T, 6_000), 5_000, new Set(), holder(7, T, 9_000)), 7);
  });

  it('a pending.json of a grant the page had reached before the command was not settled by it', () => {
    assert.match(
      unsettledAfterKill({ before: page(5, holder(5, U)), pending: { grant: 5, tokenHash: T } }) ?? '',
      /pending\.json of grant #5 was kept/,
    );
    assert.match(
      unsettledAfterKill({ before: page(6, null), pending: { grant: 5, tokenHash: T } }) ?? '',
      /grant #6 before the command began/,
    );
  });

  it('a pending.json of a later grant is kept (its write may still arrive) or is the command’s own attempt', () => {
    assert.equal(unsettledAfterKill({ before: page(4, holder(4, U)), pending: { grant: 5, tokenHash: T } }), undefined);
    assert.equal(unsettledAfterKill({ before: page(4, null) }), undefined);
  });

  it('a session whose release the page showed before and after the command was not finished by it', () => {
    const released = page(5, null, [{ action: 'release', grant: 5, outcome: 'done' }]);
    assert.ok(needsAfterRead(released, { grant: 5, tokenHash: T }));
    assert.match(
      unsettledAfterKill({ before: released, after: released, session: { grant: 5, tokenHash: T } }) ?? '',
      /session\.json of grant #5 was kept/,
    );
  });

  it('a session is judged only when the release line was there before and after, and not for a live holder', () => {
    const released = page(5, null, [{ action: 'release', grant: 5, outcome: 'done' }]);
    assert.equal(unsettledAfterKill({ before: released, session: { grant: 5, tokenHash: T } }), undefined); // no second read
    assert.equal(unsettledAfterKill({ before: released, after: page(9, null), session: { grant: 5, tokenHash: T } }), undefined); // the line left the audit
    assert.equal(
      unsettledAfterKill({
        before: page(5, null, [{ action: 'release', grant: 4, outcome: 'done' }]),
        session: { grant: 5, tokenHash: T },
      }),
      undefined,
    );
    assert.equal(
      unsettledAfterKill({
        before: page(5, null, [{ action: 'release', grant: 5, outcome: 'refused' }]),
        session: { grant: 5, tokenHash: T },
      }),
      undefined,
    );
    assert.ok(!needsAfterRead(page(5, holder(5, T), [{ action: 'release', grant: 5, outcome: 'done' }]), { grant: 5, tokenHash: T }));
    assert.ok(!needsAfterRead(released, undefined));
  });
});
